import { integer, sqliteTable, text, index } from "drizzle-orm/sqlite-core";

export const paymentStatuses = ["pending", "verified", "settled", "not_charged", "failed", "settle_unknown"] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

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
    amount: text("amount").notNull(),
    network: text("network").notNull(),
    resource: text("resource").notNull(),
    bodyHash: text("body_hash").notNull(),
    status: text("status", { enum: paymentStatuses }).notNull(),
    failureReason: text("failure_reason"),
    transaction: text("transaction"),
    quoteMs: integer("quote_ms"),
    verifyMs: integer("verify_ms"),
    upstreamMs: integer("upstream_ms"),
    settleMs: integer("settle_ms"),
    createdAt: integer("created_at", { mode: "timestamp_ms" }).notNull(),
    updatedAt: integer("updated_at", { mode: "timestamp_ms" }).notNull(),
  },
  (table) => [index("payments_payer_idx").on(table.payer), index("payments_status_idx").on(table.status)],
);
