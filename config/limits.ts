/** Limits of the paid chat endpoints, from the spec's quoted range 0.001000 to 4.733000 USD. */
export const chatLimits = {
  /** 1,050,000 input tokens x 2.80/1M + 128,000 x 14.00/1M + 0.001 = 4.733 USD, the spec's maximum quote. */
  maxInputTokens: 1_050_000,
  maxOutputTokens: 128_000,
  defaultMaxTokens: 4096,
} as const;

/** Every paid quote adds this, and no quote is below the minimum charge (USD decimal strings). */
export const pricingRules = {
  minimumChargeUsd: "0.001",
} as const;

/**
 * Largest request body read. 1,050,000 tokens of ordinary text is about 4-5 MB; the cap leaves room for
 * text that tokenizes densely while refusing bodies that could only be an attack.
 */
export const MAX_REQUEST_BODY_BYTES = 24 * 1024 * 1024;

/**
 * Largest whole answer read from a model provider. A completion of 128,000 tokens is well under 1 MB and four
 * generated images as base64 about 10 MB; a provider that sends more is misbehaving, and is cut off rather than
 * buffered.
 */
export const MAX_UPSTREAM_ANSWER_BYTES = 64 * 1024 * 1024;

/**
 * How long a stream billed on its usage (a prepaid key, x402 upto) whose client left reads on for the upstream's
 * usage report, when output had begun: the last chunks of an answer that was complete arrive within it, so leaving
 * just before the report does not skip it (and the output a stream never shows, such as hidden reasoning); a longer
 * generation is cut off after it.
 */
export const STREAM_USAGE_GRACE_MS = 2000;

/**
 * An `upto` payment is settled when its answer's usage is known, which for a stream is its end, and Permit2 refuses
 * it after the deadline the payer signed. A stream still running this long before that deadline is cut there and
 * settled for what it passed on (the facilitator refuses a deadline less than 6 s away; a settlement then waits for
 * its confirmation). A payment whose deadline leaves less than UPTO_MIN_VALIDITY_MS is refused before any work.
 */
export const UPTO_SETTLE_MARGIN_MS = 30_000;
export const UPTO_MIN_VALIDITY_MS = 60_000;

/**
 * A payer's hold on what it can pay (payer-holds.ts) ends when its payment is taken; one whose process died ends
 * by itself after this long (an `upto` payment's: a minute after its Permit2 deadline).
 */
export const PAYER_HOLD_EXPIRY_MS = 15 * 60_000;

/**
 * How long an `upto` payment waits for another of its payer's, whose EIP-2612 permit gives Permit2 its allowance, to
 * land before it is judged on the allowance left (a first-time payer's concurrent calls).
 */
export const SPONSORED_PERMIT_WAIT_MS = 15_000;

/**
 * How long an `exact` payment settled before its answer leaves waits for its payer's payments in flight to end, when
 * the balance does not cover it beside what they hold, before it is refused (402 payer_limit_exceeded).
 */
export const SETTLED_FIRST_WAIT_MS = 5_000;

/** How long a payer whose streamed answer went unpaid is served settled-first, unless SETTLEMENT_STRICT_SECONDS says. */
export const DEFAULT_STRICT_AFTER_UNPAID_MS = 86_400_000;

/** The rate limits' window: requests and tokens per minute count the calls started within the last minute. */
export const RATE_LIMIT_WINDOW_MS = 60_000;

/**
 * A limited call counts as running until this long after it last said so: it renews every third of it while it
 * runs, so a call whose process died stops counting against its payer's concurrency within it.
 */
export const RATE_LIMIT_LEASE_MS = 60_000;
