import type { Quote } from "../pricing/quote";
import type { Timings } from "./phase";
import type { DeferredWrites } from "../lifecycle/deferred-writes";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import type { PaymentKind, RequestOutcome, ServiceMetrics } from "../metrics/service-metrics";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import type { PaidRetries } from "./paid-retries";
import type { JsonBody } from "../http/read-json-body";
import type { StartedStream } from "../upstream/openai-upstream";
import type { EventStream } from "../http/event-stream";
import type { StreamMeter } from "./stream-meter";
import type { Payer } from "../limits/rate-limiter";

/** What the payment bought, handed to the work. */
export interface Grant {
  /** The output tokens the work may produce (a prepaid key's budget may lower the quoted cap). */
  outputCap: number;
  /** The verified x402 payment, for records (a prepaid key bought with it). */
  payment?: { nonce: string; payer: string };
  /** Who pays: the prepaid key or the paying wallet, whose rate limits the call counts against. */
  payer: Payer;
  /**
   * Aborted when the payment is refused while the work runs (SETTLEMENT_ORDER=overlap): the work passes it to its
   * upstream call, which then stops.
   */
  signal?: AbortSignal;
}

/** The price an x402 payment settles, in atomic units of the network's USDC: every paid answer states it. */
export interface X402Price {
  amount: bigint;
  decimals: number;
  network: string;
}

/**
 * How a paid answer is written in the caller's API, the last stage of every answer (a dialect's encoders,
 * server/dialects/dialect.ts): billing states the cost on the canonical answer (a chat completion, or the canonical
 * chat stream, whose end it holds until paid and whose failures it states with chat's error event), then hands it
 * here. Absent, the canonical answer is the caller's.
 */
export interface AnswerEncoder {
  json(body: unknown): unknown;
  stream(events: EventStream): EventStream;
}

/**
 * The result of the paid work, ready to send: it exists only once the upstream has succeeded. `onUnsettled`
 * undoes what the work wrote (a prepaid key) when the payment is not taken; `price` is set by the x402 session, so
 * that each answer it builds, settled or not, says what it cost; `provider` names the catalog's provider that served
 * it (X-Paysvc-Provider); `encode` writes it in the caller's API once its cost is stated.
 */
export type PreparedAnswer = (
  { kind: "json"; body: unknown; status?: number } | { kind: "stream"; stream: StartedStream }
) & {
  onUnsettled?: () => Promise<void> | void;
  /**
   * Writes what the payment bought once it is taken (a top-up's tokens), before the answer leaves; a database away
   * for now delays it (deferred-writes.ts) rather than losing it. Whole answers only.
   */
  onSettled?: () => Promise<unknown>;
  price?: X402Price;
  provider?: string;
  encode?: AnswerEncoder;
};

/** What an x402 payment session works with: the facilitator, the ledger, the metrics, the answers kept for retries. */
/** A payment the facilitator found valid: how long verify took, and which facilitator said so (it settles it). */
export interface Verified {
  verifyMs: number;
  facilitator: string;
}

export type X402Services = {
  gateway: PaymentGateway;
  ledger: PaymentLedger;
  metrics: ServiceMetrics;
  retries: PaidRetries;
  /** Work that outlives its answer (a settlement beside a stream, a ledger record): a draining process waits for it. */
  keep: <T>(work: Promise<T>) => Promise<T>;
  /** The ledger records of what already happened (a settlement): a database away delays them, never loses them. */
  writes: DeferredWrites;
};

/** One request to bill: what was asked, and its price. */
export interface BillableCall {
  request: ApiRequest;
  body: JsonBody;
  /** Absolute URL of the resource, as the caller sees it; x402 payments are bound to it. */
  resourceUrl: string;
  /** The endpoint's own path, whichever of its paths was asked. */
  endpoint: string;
  quote: Quote;
  /** Time spent reading, parsing and quoting the request. */
  quoteMs: number;
  /**
   * The work is an upstream call that may start while the facilitator verifies the payment (its answer waits for the
   * verdict; a refusal aborts it): the endpoint's `overlapsVerify`.
   */
  overlapsVerify?: boolean;
  /** The caller asked for a stream (`stream: true`): bytes of it may go out before its payment is taken. */
  streams?: boolean;
  /** A `batch-settlement` channel may pay for it, where the deployment offers channels: the endpoint's `channels`. */
  channels?: boolean;
  /** Extensions the 402 names beside the quote (the bazaar discovery extension). */
  extensions?: Record<string, unknown>;
  /**
   * How the call's output tokens are read, where a prepaid key may pay: such a call may also be paid with x402
   * `upto` and charged the tokens used.
   */
  usage?: {
    /** The output tokens a whole answer reports. */
    fromJson(body: unknown): number | undefined;
    /** The input tokens a whole answer (or a stream's usage event, as `{usage}`) reports. */
    inputFromJson(body: unknown): number | undefined;
    streamMeter(allowedOutput: number): StreamMeter;
  };
}

/**
 * A paid call that may go ahead: the work gets `grant`; if the work throws, `failed` undoes what authorizing took
 * and throws what to answer instead (or, when the payment was refused while the work ran, returns that refusal);
 * otherwise `finish` takes the payment (settle, or charge the usage) and builds the answer.
 */
export interface PaymentSession {
  grant: Grant;
  /** The call's phases' times (ms), the work's written by whoever runs it (bill-request.ts's `upstream` phase). */
  timings: Timings;
  failed(error: unknown): Promise<Finished>;
  finish(prepared: PreparedAnswer): Promise<Finished>;
}

/** A paid call's answer, with what it came to and how long each phase took (ms), for the metrics. */
export interface Finished {
  answer: ApiAnswer;
  outcome: Extract<RequestOutcome, "paid" | "prepaid" | "settle_unknown" | "refused">;
  payment: PaymentKind;
  timings: Timings;
  /** What an x402 payment settled (or was asked to settle), in atomic units. */
  settledAmount?: bigint;
  /** The tokens a prepaid key was charged so far (a stream's, once it ended), where a key paid. */
  chargedTokens?: () => number | undefined;
}

/**
 * The answer instead of the work (the 402 with the price: `quoted`; a refused payment: `refused`), or the session
 * to run the work in.
 */
export type Authorization =
  | { kind: "answer"; answer: ApiAnswer; outcome: "quoted" | "refused" | "replayed" }
  | { kind: "granted"; session: PaymentSession };

/** The error codes of a 402. */
export type ChallengeCode =
  | "payment_required"
  | "payment_invalid"
  | "payment_mismatch"
  | "payment_already_used"
  | "payment_rejected"
  | "settlement_failed"
  | "payer_limit_exceeded"
  | "payer_in_debt";

/** Authorizes one call (a prepaid key's reservation, an x402 payment's acceptance), as a method's authorize runs it. */
export interface CallAuthorizer {
  authorize(call: BillableCall): Promise<Authorization>;
}
