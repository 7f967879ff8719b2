import { logEvent } from "../log";
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
 * the amount it was asked to move, and the transaction when one is known, for reconciliation. A failure to write it
 * is logged, never thrown (the stream is under way; the row stays `verified`, which reconciliation also reads).
 */
export async function recordSettleUnknown(
  payment: StreamPayment,
  amount: bigint,
  reason: string,
  transaction: string | undefined,
  settleMs: number,
): Promise<void> {
  const { paymentId, upstreamMs } = payment;
  const update = { status: "settle_unknown" as const, failureReason: reason, transaction, settledAmount: amount };
  await payment.services.ledger.update(paymentId, { ...update, upstreamMs, settleMs }).catch((error: unknown) => {
    logEvent("error", "ledger_update_failed", { paymentId, transaction, error: String(error) });
  });
  payment.log("settle_unknown", reason, transaction, amount);
}

/**
 * A settlement that moved `amount`: the row says so (a failure to write it is logged, the row stays `verified` for
 * reconciliation: the transfer is on chain), and the revenue counts it.
 */
export async function recordSettled(
  payment: StreamPayment,
  amount: bigint,
  transaction: string,
  settleMs: number,
): Promise<void> {
  const { ledger, metrics } = payment.services;
  const { paymentId, upstreamMs } = payment;
  const update = { status: "settled" as const, transaction, settledAmount: amount, upstreamMs, settleMs };
  await ledger.update(paymentId, update).catch((error: unknown) => {
    logEvent("error", "ledger_update_failed", { paymentId, transaction, error: String(error) });
  });
  metrics.settled(payment.call.endpoint, payment.call.quote.model, amount);
  payment.log("settled", undefined, transaction, amount);
}
