/**
 * The x402 schemes a payment may be made in, the same list for the types, both engines' ledger schemas, the
 * discovery documents and the metrics: its amount (`exact`); at most its amount, what the call used (`upto`); or
 * charged to a channel's running total, claimed later with others (`batch-settlement`).
 */
export const paymentSchemes = ["exact", "upto", "batch-settlement"] as const;
export type PaymentScheme = (typeof paymentSchemes)[number];
