import { paymentSchemes } from "../../core/payment-scheme";
import { paymentProtocols } from "../../core/payment-method-name";
import { integer, real, sqliteTable, text, index, primaryKey } from "drizzle-orm/sqlite-core";
import { paymentStatuses, prepaidKeyStatuses } from "../../core/payment-status";

/*
 * The SQLite schema (the embedded default). postgres/schema.ts is the same data on PostgreSQL; a change to one is
 * a migration for both (`npm run db:generate`).
 */

/**
 * One row per payment signature we accepted for processing. The unique nonce is what stops a signature from
 * being used twice, even by two requests that arrive at once: the row is written before the upstream is called.
 * Amounts are decimal strings of atomic units (exact, and portable to PostgreSQL numeric).
 */
export const payments = sqliteTable(
  "payments",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    nonce: text("nonce").notNull().unique(),
    payer: text("payer").notNull(),
    /** What the payer signed for: the price (`exact`), or the most the call may settle (`upto`). */
    amount: text("amount").notNull(),
    // Every scheme a row is written with (channels' rows are batch-settlement): a TypeScript check, no column type.
    scheme: text("scheme", { enum: paymentSchemes }).notNull().default("exact"),
    /** The protocol it came by: x402, or MPP (an x402 `exact` payment in MPP's envelope). */
    method: text("method", { enum: paymentProtocols }).notNull().default("x402"),
    /** What moved on chain, once settled: the amount (`exact`), or the tokens used at their price (`upto`). */
    settledAmount: text("settled_amount"),
    /** What a stream delivered before its settlement was refused (`unpaid`), at the quote's rates. */
    unpaidAmount: text("unpaid_amount"),
    network: text("network").notNull(),
    resource: text("resource").notNull(),
    /** The endpoint's own path and the model the call used, for reports; null on rows written before them. */
    endpoint: text("endpoint"),
    model: text("model"),
    bodyHash: text("body_hash").notNull(),
    /**
     * The PAYMENT-SIGNATURE header as received (base64 of the signed x402 payload): what the reconciler checks
     * against the chain and settles with. It can only move the payer's money to our pay-to. Null on older rows.
     */
    paymentSignature: text("payment_signature"),
    status: text("status", { enum: paymentStatuses }).notNull(),
    failureReason: text("failure_reason"),
    transaction: text("transaction"),
    /** The facilitator that verified the payment, then the one that settled it (or was last asked to). */
    facilitator: text("facilitator"),
    quoteMs: integer("quote_ms"),
    verifyMs: integer("verify_ms"),
    upstreamMs: integer("upstream_ms"),
    settleMs: integer("settle_ms"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [
    index("payments_payer_idx").on(table.payer),
    index("payments_status_idx").on(table.status),
    index("payments_created_at_idx").on(table.createdAt),
  ],
);

/**
 * Prepaid bearer keys. Only the SHA-256 of a code is stored. A key is `active` while budget remains (from its
 * creation, though its code is revealed only once its payment settles), `disabled` once used up, `void` if its
 * payment never settled, `revoked` once its owner or the operator revoked it. `pending` (unusable) is what older
 * releases wrote before the settlement. used_tokens + reserved_tokens never exceed total_tokens: reserved_tokens is
 * what the key's reservations hold (expired ones too, until a sweep ends them), kept by the statements that write
 * them, as on PostgreSQL.
 */
export const prepaidKeys = sqliteTable(
  "prepaid_keys",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    codeHash: text("code_hash").notNull().unique(),
    model: text("model").notNull(),
    totalTokens: integer("total_tokens").notNull(),
    usedTokens: integer("used_tokens").notNull().default(0),
    reservedTokens: integer("reserved_tokens").notNull().default(0),
    status: text("status", { enum: prepaidKeyStatuses }).notNull(),
    paymentNonce: text("payment_nonce"),
    /** The rate limits its buyer asked for (JSON: requests_per_minute, tokens_per_minute, concurrent), if any. */
    limits: text("limits"),
    /** The wallet that paid for it (lower-case hex on EVM, base58 on Solana): the key's owner. Null if unknown. */
    owner: text("owner"),
    /** The code's first characters (`paysvc_pk_` and six more), to tell keys apart; null on keys sold before it. */
    codePrefix: text("code_prefix"),
    /** When a call last charged it. */
    lastUsedAt: integer("last_used_at", { mode: "timestamp_ms" }),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [index("prepaid_keys_owner_idx").on(table.owner)],
);

/**
 * Tokens held for calls in flight; a reservation of a process that died stops counting at expires_at. The rows
 * are kept in key order (the table is WITHOUT ROWID, see migration 0003): what a key holds is one range of the
 * table, and a reservation written or ended changes one page, where a rowid table with an index on key_id changed
 * two, plus AUTOINCREMENT's counter. The id is random (48 bits), so that no reservation takes the id of one ended
 * before it, whose call might still settle it late. key_id has no foreign-key constraint (migration 0008): the one
 * statement that writes a reservation takes it from the key row it updates, and keys are never deleted; the check
 * doubled the cost of reserving and settling on SQLite (0.12 against 0.06 ms, measured).
 */
export const prepaidReservations = sqliteTable(
  "prepaid_reservations",
  {
    keyId: integer("key_id").notNull(),
    id: integer("id").notNull(),
    tokens: integer("tokens").notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [primaryKey({ columns: [table.keyId, table.id] })],
);

/**
 * Free chat requests counted per caller address, one row per counted request (a sliding-window log). A row is
 * inserted only if the windows still have room, in one conditional statement; a request that fails upstream
 * deletes its row again.
 */
export const freeChatRequests = sqliteTable(
  "free_chat_requests",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    address: text("address").notNull(),
    at: integer("at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [index("free_chat_requests_address_at_idx").on(table.address, table.at)],
);

/**
 * Each rate-limited subject (a prepaid key, a paying wallet) as one row (limits/limit-log.ts, storage/rate-limit-sql.ts):
 * its request and token clocks (ms, a cell rate algorithm each: how far ahead of now its calls have moved them), the
 * calls running under its lease (`lease_until`, ms, renewed by the running calls; a lapsed lease starts a new
 * `epoch`), whether the last call was admitted, and for the operator's page the clock hour (hours since the epoch)
 * of the last call, the calls admitted and refused in it, and in the hour before it.
 */
export const rateLimits = sqliteTable("rate_limits", {
  subject: text("subject").primaryKey(),
  requestsAt: real("requests_at").notNull(),
  tokensAt: real("tokens_at").notNull(),
  running: integer("running").notNull(),
  leaseUntil: real("lease_until").notNull(),
  epoch: integer("epoch").notNull(),
  admitted: integer("admitted").notNull(),
  hour: integer("hour").notNull(),
  hourCalls: integer("hour_calls").notNull(),
  hourRefusals: integer("hour_refusals").notNull(),
  prevCalls: integer("prev_calls").notNull(),
  prevRefusals: integer("prev_refusals").notNull(),
});

/**
 * Quotes whose price moves (live settlement gas), held for their lifetime so that the signed retry, at any
 * instance, is checked against the requirements it was quoted. The key is a hash of resource and body.
 */
export const quoteHolds = sqliteTable(
  "quote_holds",
  {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [index("quote_holds_expires_at_idx").on(table.expiresAt)],
);

/**
 * What each payer owes at once: one row per in-flight payment that can be settled after bytes go out, its signed
 * maximum (atomic units) held against what the payer can pay until it is taken, or until `expires_at` (ms).
 * `sponsored`: 1 when the hold rests on an EIP-2612 permit the payment carries.
 */
export const payerHolds = sqliteTable(
  "payer_holds",
  {
    key: text("key").primaryKey(),
    payer: text("payer").notNull(),
    amount: text("amount").notNull(),
    sponsored: integer("sponsored").notNull().default(0),
    expiresAt: integer("expires_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [index("payer_holds_payer_idx").on(table.payer)],
);

/**
 * How many of each payer's holds have ended (been released), and what they held: a hold whose capacity was read
 * before others ended counts theirs as still held, since those payments' settlements may have spent the funds read
 * or not yet. Never reset, so a sum seen is never seen again for other funds.
 */
export const payerHoldEnds = sqliteTable("payer_hold_ends", {
  payer: text("payer").primaryKey(),
  ended: integer("ended").notNull(),
  /** What the ended holds held when they ended, summed (atomic units, as text); 0 for those ended before it was kept. */
  endedAmount: text("ended_amount").notNull().default("0"),
});

/**
 * Answers kept for the x402 payment-identifier extension: a paid, non-streamed answer under its payer and the
 * payment id the caller chose, so that a retry of the same request (its connection dropped) gets it again
 * instead of paying twice. `request` is the resource and the body's SHA-256; `answer` the status, headers and
 * body as JSON. Kept until `expires_at` (ms).
 */
export const paidAnswers = sqliteTable(
  "paid_answers",
  {
    payer: text("payer").notNull(),
    paymentId: text("payment_id").notNull(),
    nonce: text("nonce").notNull(),
    request: text("request").notNull(),
    answer: text("answer").notNull(),
    expiresAt: integer("expires_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.payer, table.paymentId] }),
    index("paid_answers_expires_at_idx").on(table.expiresAt),
  ],
);

/**
 * x402 `batch-settlement` channels: per channel opened to this deployment's receiver, the state the scheme's server
 * keeps (@x402/evm's ChannelStorage, channel-rows.ts): the running total charged and the highest voucher signed, the
 * deposit and claims mirrored from the chain, and the request in flight. Amounts are decimal strings of atomic
 * units, as in payments; times are milliseconds, or the chain's seconds where the chain sets them
 * (`withdraw_requested_at`). `version` moves with every write: an update applies only to the state it was made from.
 */
export const paymentChannels = sqliteTable(
  "payment_channels",
  {
    channelId: text("channel_id").primaryKey(),
    payer: text("payer").notNull(),
    receiver: text("receiver").notNull(),
    token: text("token").notNull(),
    /** The channel's configuration as the scheme signs it (JSON). */
    channelConfig: text("channel_config").notNull(),
    chargedCumulativeAmount: text("charged_cumulative_amount").notNull(),
    signedMaxClaimable: text("signed_max_claimable").notNull(),
    signature: text("signature").notNull(),
    balance: text("balance").notNull(),
    totalClaimed: text("total_claimed").notNull(),
    withdrawRequestedAt: integer("withdraw_requested_at").notNull(),
    refundNonce: integer("refund_nonce").notNull(),
    onchainSyncedAt: integer("onchain_synced_at"),
    lastRequestTimestamp: integer("last_request_timestamp").notNull(),
    pendingId: text("pending_id"),
    pendingSignedMaxClaimable: text("pending_signed_max_claimable"),
    pendingExpiresAt: integer("pending_expires_at"),
    version: integer("version").notNull(),
  },
  (table) => [index("payment_channels_payer_idx").on(table.payer)],
);

/**
 * The browser sessions' generations (auth/session-store.ts), a row per subject (`<kind>:<subject>`: the operator, a
 * wallet), absent until its first sign-out. A session cookie names its subject's generation; a sign-out moves it on,
 * ending every session of that subject on every instance.
 */
export const sessionGenerations = sqliteTable("session_generations", {
  subject: text("subject").primaryKey(),
  generation: integer("generation").notNull(),
});
