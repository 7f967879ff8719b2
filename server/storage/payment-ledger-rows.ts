import { sql, type SQL } from "drizzle-orm";
import type { NewPayment, PaymentUpdate } from "../payment/payment-ledger";

/** The values a claim writes, as both engines bind them (`at` in each engine's time type). */
export function claimValues<At>(payment: NewPayment, at: At) {
  return {
    nonce: payment.nonce,
    payer: payment.payer,
    amount: payment.amount.toString(),
    scheme: payment.scheme,
    method: payment.method,
    network: payment.network,
    resource: payment.resource,
    endpoint: payment.endpoint,
    model: payment.model,
    bodyHash: payment.bodyHash,
    paymentSignature: payment.paymentSignature,
    quoteMs: Math.round(payment.quoteMs),
    at,
  };
}

/**
 * The columns of the claim's insert, as both engines prepare it: each bound to the claimValues field of its name,
 * the times to `at` (the engine's cast of that field).
 */
export function claimColumns(at: SQL) {
  const bound = (name: Exclude<keyof ReturnType<typeof claimValues>, "at">) => sql.placeholder(name);
  return {
    nonce: bound("nonce"),
    payer: bound("payer"),
    amount: bound("amount"),
    scheme: bound("scheme"),
    method: bound("method"),
    network: bound("network"),
    resource: bound("resource"),
    endpoint: bound("endpoint"),
    model: bound("model"),
    bodyHash: bound("bodyHash"),
    paymentSignature: bound("paymentSignature"),
    status: "pending" as const,
    quoteMs: bound("quoteMs"),
    createdAt: at,
    updatedAt: at,
  };
}

/** The values an update writes; null keeps the stored value. */
export function updateValues<At>(id: number, update: PaymentUpdate, at: At) {
  const round = (value: number | undefined) => (value === undefined ? null : Math.round(value));
  return {
    id,
    status: update.status,
    failureReason: update.failureReason ?? null,
    transaction: update.transaction ?? null,
    facilitator: update.facilitator ?? null,
    settledAmount: update.settledAmount?.toString() ?? null,
    unpaidAmount: update.unpaidAmount?.toString() ?? null,
    verifyMs: round(update.verifyMs),
    upstreamMs: round(update.upstreamMs),
    settleMs: round(update.settleMs),
    at,
  };
}

/** A row as read back, its amounts as bigint. */
export function paymentRecord<
  Row extends { amount: string; settledAmount: string | null; unpaidAmount: string | null },
>(row: Row) {
  const amount = (value: string | null) => (value === null ? null : BigInt(value));
  return {
    ...row,
    amount: BigInt(row.amount),
    settledAmount: amount(row.settledAmount),
    unpaidAmount: amount(row.unpaidAmount),
  };
}
