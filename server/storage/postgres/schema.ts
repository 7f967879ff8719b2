import { paymentSchemes } from "../../core/payment-scheme";
import { paymentProtocols } from "../../core/payment-method-name";
import {
  bigint,
  boolean,
  doublePrecision,
  index,
  integer,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
} from "drizzle-orm/pg-core";
import { paymentStatuses, prepaidKeyStatuses } from "../../core/payment-status";

/*
 * The PostgreSQL schema: the same data as sqlite/schema.ts (whose comments say what each table is for), in
 * PostgreSQL's types: amounts as numeric, times as timestamptz, counters and ids as bigint. The functions that
 * keep the budget and free-chat invariants under concurrency are in migrations 0001 and 0002.
 */
const at = (name: string) => timestamp(name, { withTimezone: true, mode: "date" });
const count = (name: string) => bigint(name, { mode: "number" });

export const payments = pgTable(
  "payments",
  {
    id: count("id").primaryKey().generatedAlwaysAsIdentity(),
    nonce: text("nonce").notNull().unique(),
    payer: text("payer").notNull(),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    // Every scheme a row is written with (channels' rows are batch-settlement): a TypeScript check, no column type.
    scheme: text("scheme", { enum: paymentSchemes }).notNull().default("exact"),
    /** The protocol it came by: x402, or MPP (an x402 `exact` payment in MPP's envelope). */
    method: text("method", { enum: paymentProtocols }).notNull().default("x402"),
    settledAmount: numeric("settled_amount", { precision: 78, scale: 0 }),
    /** What a stream delivered before its settlement was refused (`unpaid`), at the quote's rates. */
    unpaidAmount: numeric("unpaid_amount", { precision: 78, scale: 0 }),
    network: text("network").notNull(),
    resource: text("resource").notNull(),
    endpoint: text("endpoint"),
    model: text("model"),
    bodyHash: text("body_hash").notNull(),
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
    createdAt: at("created_at").notNull(),
    updatedAt: at("updated_at").notNull(),
  },
  (table) => [
    index("payments_payer_idx").on(table.payer),
    index("payments_status_idx").on(table.status),
    index("payments_created_at_idx").on(table.createdAt),
  ],
);

export const prepaidKeys = pgTable(
  "prepaid_keys",
  {
    id: count("id").primaryKey().generatedAlwaysAsIdentity(),
    codeHash: text("code_hash").notNull().unique(),
    model: text("model").notNull(),
    totalTokens: count("total_tokens").notNull(),
    usedTokens: count("used_tokens").notNull().default(0),
    /** What the key's reservations hold, kept beside them so reserving need not add them up (see migration 0002). */
    reservedTokens: count("reserved_tokens").notNull().default(0),
    status: text("status", { enum: prepaidKeyStatuses }).notNull(),
    paymentNonce: text("payment_nonce"),
    limits: text("limits"),
    /** As on SQLite: the paying wallet, the code's first characters, the last charge. */
    owner: text("owner"),
    codePrefix: text("code_prefix"),
    lastUsedAt: at("last_used_at"),
    createdAt: at("created_at").notNull(),
    updatedAt: at("updated_at").notNull(),
  },
  (table) => [index("prepaid_keys_owner_idx").on(table.owner)],
);

export const prepaidReservations = pgTable(
  "prepaid_reservations",
  {
    /** No foreign-key constraint, as on SQLite (see sqlite/schema.ts and migration 0007). */
    keyId: count("key_id").notNull(),
    id: count("id").notNull(),
    tokens: count("tokens").notNull(),
    expiresAt: at("expires_at").notNull(),
    createdAt: at("created_at").notNull(),
  },
  (table) => [primaryKey({ columns: [table.keyId, table.id] })],
);

export const freeChatRequests = pgTable(
  "free_chat_requests",
  {
    id: count("id").primaryKey().generatedAlwaysAsIdentity(),
    address: text("address").notNull(),
    at: at("at").notNull(),
  },
  (table) => [index("free_chat_requests_address_at_idx").on(table.address, table.at)],
);

/** As on SQLite (sqlite/schema.ts): one row per rate-limited subject, its clocks and lease in ms. */
export const rateLimits = pgTable("rate_limits", {
  subject: text("subject").primaryKey(),
  requestsAt: doublePrecision("requests_at").notNull(),
  tokensAt: doublePrecision("tokens_at").notNull(),
  running: integer("running").notNull(),
  leaseUntil: doublePrecision("lease_until").notNull(),
  epoch: integer("epoch").notNull(),
  admitted: integer("admitted").notNull(),
  hour: count("hour").notNull(),
  hourCalls: count("hour_calls").notNull(),
  hourRefusals: count("hour_refusals").notNull(),
  prevCalls: count("prev_calls").notNull(),
  prevRefusals: count("prev_refusals").notNull(),
});

export const quoteHolds = pgTable(
  "quote_holds",
  {
    key: text("key").primaryKey(),
    value: text("value").notNull(),
    expiresAt: at("expires_at").notNull(),
  },
  (table) => [index("quote_holds_expires_at_idx").on(table.expiresAt)],
);

/** See sqlite/schema.ts. */
export const payerHolds = pgTable(
  "payer_holds",
  {
    key: text("key").primaryKey(),
    payer: text("payer").notNull(),
    amount: numeric("amount", { precision: 78, scale: 0 }).notNull(),
    sponsored: boolean("sponsored").notNull().default(false),
    expiresAt: at("expires_at").notNull(),
  },
  (table) => [index("payer_holds_payer_idx").on(table.payer)],
);

/** See sqlite/schema.ts. */
export const payerHoldEnds = pgTable("payer_hold_ends", {
  payer: text("payer").primaryKey(),
  ended: bigint("ended", { mode: "bigint" }).notNull(),
  /** What the ended holds held when they ended, summed (atomic units). */
  endedAmount: numeric("ended_amount", { precision: 78, scale: 0 }).notNull().default("0"),
});

export const paidAnswers = pgTable(
  "paid_answers",
  {
    payer: text("payer").notNull(),
    paymentId: text("payment_id").notNull(),
    nonce: text("nonce").notNull(),
    request: text("request").notNull(),
    answer: text("answer").notNull(),
    expiresAt: at("expires_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.payer, table.paymentId] }),
    index("paid_answers_expires_at_idx").on(table.expiresAt),
  ],
);

/** See sqlite/schema.ts: amounts as numeric, the chain's and the scheme's times as bigint, as the scheme gives them. */
export const paymentChannels = pgTable(
  "payment_channels",
  {
    channelId: text("channel_id").primaryKey(),
    payer: text("payer").notNull(),
    receiver: text("receiver").notNull(),
    token: text("token").notNull(),
    channelConfig: text("channel_config").notNull(),
    chargedCumulativeAmount: numeric("charged_cumulative_amount", { precision: 78, scale: 0 }).notNull(),
    signedMaxClaimable: numeric("signed_max_claimable", { precision: 78, scale: 0 }).notNull(),
    signature: text("signature").notNull(),
    balance: numeric("balance", { precision: 78, scale: 0 }).notNull(),
    totalClaimed: numeric("total_claimed", { precision: 78, scale: 0 }).notNull(),
    withdrawRequestedAt: count("withdraw_requested_at").notNull(),
    refundNonce: count("refund_nonce").notNull(),
    onchainSyncedAt: count("onchain_synced_at"),
    lastRequestTimestamp: count("last_request_timestamp").notNull(),
    pendingId: text("pending_id"),
    pendingSignedMaxClaimable: numeric("pending_signed_max_claimable", { precision: 78, scale: 0 }),
    pendingExpiresAt: count("pending_expires_at"),
    version: count("version").notNull(),
  },
  (table) => [index("payment_channels_payer_idx").on(table.payer)],
);

export const sessionGenerations = pgTable("session_generations", {
  subject: text("subject").primaryKey(),
  generation: count("generation").notNull(),
});
