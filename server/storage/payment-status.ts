/** The states of a payments-ledger row, the same on every engine. */
export const paymentStatuses = ["pending", "verified", "settled", "not_charged", "failed", "settle_unknown"] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

/** The states of a prepaid key: see the schemas. */
export const prepaidKeyStatuses = ["pending", "active", "disabled", "void"] as const;
export type PrepaidKeyStatus = (typeof prepaidKeyStatuses)[number];
