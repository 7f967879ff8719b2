import { logEvent } from "../core/log";
import type { BillableCall } from "./payment-method";
import type { AcceptedPayment, PricedRequest } from "./schemes/payment-scheme";

/** The log line of a paid request's outcome: info when settled, warn otherwise; the phases' times in ms. */
export function logPaidRequest(
  start: { call: BillableCall; priced: PricedRequest; accepted: AcceptedPayment },
  timings: Record<string, number>,
  what: { outcome: string; reason?: string; transaction?: string; settled?: bigint },
): void {
  logEvent(what.outcome === "settled" ? "info" : "warn", "paid_request", {
    resource: start.call.resourceUrl,
    outcome: what.outcome,
    payer: start.accepted.payer,
    scheme: start.accepted.scheme.name,
    amount: start.priced.amount.toString(),
    settled: what.settled?.toString(),
    reason: what.reason,
    transaction: what.transaction,
    timings_ms: Object.fromEntries(Object.entries(timings).map(([name, value]) => [name, Number(value.toFixed(2))])),
    trace_id: start.call.request.trace?.span.traceId,
  });
}
