import type { Settlement } from "../payment/facilitator-answers";
import type { DecodedPayment } from "../payment/payment-signature";
import type { facilitatorTerms } from "../payment/x402-v1";
import type { BillableCall, Verified, X402Services } from "./payment-method";

/** What settling a verified payment needs: the payment, its terms, and the verdict (who verified it). */
export interface VerifiedPayment {
  services: X402Services;
  payment: DecodedPayment;
  terms: ReturnType<typeof facilitatorTerms>;
  verdict: Promise<Verified>;
}

/**
 * Settles a verified payment (`exact`: its amount; `upto`: `amount`) at the facilitator that verified it, failing
 * over as the gateway's rules allow; a FacilitatorUnavailableError leaves the outcome unknown.
 */
export async function settleVerified(payment: VerifiedPayment, amount?: bigint): Promise<Settlement> {
  const { facilitator } = await payment.verdict;
  const { payload, requirements } = payment.terms;
  return payment.services.gateway.settle(payload, requirements, {
    amount,
    verifiedBy: facilitator,
    payment: payment.payment,
  });
}

/** The facilitator a failed settlement names, for the ledger row. */
export function facilitatorOf(error: unknown): string | undefined {
  return (error as { facilitator?: string }).facilitator;
}

/** What a stream settled while it is passed on works with (`upto` on its usage, `exact` in overlap order). */
export interface StreamPayment extends VerifiedPayment {
  call: BillableCall;
  /** The payment's ledger row. */
  paymentId: number;
  upstreamMs: number;
  log(outcome: string, reason?: string, transaction?: string, settled?: bigint): void;
}

/**
 * A settlement whose outcome is unknown (the facilitator failed, or answered `settlement_pending`): the row keeps
 * the amount it was asked to move, and the transaction when one is known, for reconciliation. Never thrown: a
 * database away delays the record (deferred-writes.ts); the row is `verified` meanwhile, which reconciliation reads.
 */
export async function recordSettleUnknown(
  payment: StreamPayment,
  amount: bigint,
  reason: string,
  transaction: string | undefined,
  settleMs: number,
  facilitator: string | undefined,
): Promise<void> {
  const { paymentId, upstreamMs } = payment;
  const update = {
    status: "settle_unknown" as const,
    failureReason: reason,
    transaction,
    settledAmount: amount,
    facilitator,
  };
  const { writes, ledger } = payment.services;
  await writes.write("ledger_update", { paymentId, status: update.status, transaction }, () =>
    ledger.update(paymentId, { ...update, upstreamMs, settleMs }),
  );
  payment.log("settle_unknown", reason, transaction, amount);
}

/**
 * A settlement that moved `amount`: the row says so (a database away delays the record; the transfer is on chain),
 * and the revenue counts it.
 */
export async function recordSettled(
  payment: StreamPayment,
  amount: bigint,
  settlement: Settlement,
  settleMs: number,
): Promise<void> {
  const { ledger, metrics, writes } = payment.services;
  const { paymentId, upstreamMs } = payment;
  const { transaction, facilitator } = settlement;
  const update = { status: "settled" as const, transaction, settledAmount: amount, upstreamMs, settleMs, facilitator };
  await writes.write("ledger_update", { paymentId, status: update.status, transaction }, () =>
    ledger.update(paymentId, update),
  );
  metrics.settled(payment.call.endpoint, payment.call.quote.model, amount);
  payment.log("settled", undefined, transaction, amount);
}
