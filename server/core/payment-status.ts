/**
 * The states of a payments-ledger row, the same on every engine (docs/ledger.md says what each means).
 * `unsettled`: reconciliation found the authorization unused past its validity, so it can never be settled.
 * `unpaid`: a stream passed on while its payment settled, and the settlement was refused: `unpaid_amount` is what
 * it delivered. `charged`: a batch-settlement channel was charged `settled_amount`, which a claim moves on chain.
 */
export const paymentStatuses = [
  "pending",
  "verified",
  "settled",
  "not_charged",
  "failed",
  "settle_unknown",
  "unsettled",
  "unpaid",
  "charged",
] as const;
export type PaymentStatus = (typeof paymentStatuses)[number];

/** The states of a prepaid key: see the schemas. */
export const prepaidKeyStatuses = ["pending", "active", "disabled", "void", "revoked"] as const;
export type PrepaidKeyStatus = (typeof prepaidKeyStatuses)[number];
