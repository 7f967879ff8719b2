import type { facilitatorTerms } from "../payment/x402-v1";
import type { BillableCall, X402Services } from "./payment-method";

/** What a stream settled while it is passed on works with (`upto` on its usage, `exact` in overlap order). */
export interface StreamPayment {
  services: X402Services;
  call: BillableCall;
  terms: ReturnType<typeof facilitatorTerms>;
  /** The payment's ledger row. */
  paymentId: number;
  upstreamMs: number;
  log(outcome: string, reason?: string, transaction?: string, settled?: bigint): void;
}

/**
 * A settlement whose outcome is unknown (the facilitator failed, or answered `settlement_pending`): the row keeps
 * the amount it was asked to move, and the transaction when one is known, for reconciliation.
 */
export async function recordSettleUnknown(
  payment: StreamPayment,
  amount: bigint,
  reason: string,
  transaction: string | undefined,
  settleMs: number,
): Promise<void> {
  await payment.services.ledger.update(payment.paymentId, {
    status: "settle_unknown",
    failureReason: reason,
    transaction,
    settledAmount: amount,
    upstreamMs: payment.upstreamMs,
    settleMs,
  });
  payment.log("settle_unknown", reason, transaction, amount);
}
