import { logEvent } from "../log";
import type { DecodedPayment } from "../payment/payment-signature";
import type { facilitatorTerms } from "../payment/x402-v1";
import type { BillableCall } from "./payment-method";

/** The log line of a paid request's outcome: info when settled, warn otherwise; the phases' times in ms. */
export function logPaidRequest(
  start: { call: BillableCall; payment: DecodedPayment; terms: ReturnType<typeof facilitatorTerms> },
  timings: Record<string, number>,
  what: { outcome: string; reason?: string; transaction?: string; settled?: bigint },
): void {
  logEvent(what.outcome === "settled" ? "info" : "warn", "paid_request", {
    resource: start.call.resourceUrl,
    outcome: what.outcome,
    payer: start.payment.payer,
    scheme: start.terms.requirements.scheme,
    amount: start.payment.payload.accepted.amount,
    settled: what.settled?.toString(),
    reason: what.reason,
    transaction: what.transaction,
    timings_ms: Object.fromEntries(Object.entries(timings).map(([name, value]) => [name, Number(value.toFixed(2))])),
  });
}
