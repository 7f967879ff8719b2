import type { Settlement } from "../../payment/facilitator-answers";
import type { PaymentLedger } from "../../payment/payment-ledger";
import type { Acceptance, Taking } from "./payment-scheme";

/**
 * What a facilitator's answer to a settlement came to: taken; unknown when it was broadcast but not confirmed (the
 * x402 server already asked once more: the transfer may still land); refused otherwise.
 */
export function takingOf(settlement: Settlement, settleMs: number): Taking {
  if (settlement.success) return { kind: "taken", settlement, settleMs };
  const { errorReason, transaction, facilitator } = settlement;
  if (errorReason === "settlement_pending" && transaction) {
    return { kind: "unknown", reason: errorReason, transaction, facilitator, settleMs };
  }
  const reason = errorReason ?? "settlement_failed";
  return { kind: "refused", reason, message: settlement.errorMessage, facilitator, settleMs };
}

/** A payment's ledger row as first written: what it is for, who pays, under which key, as the caller sent it. */
export function paymentRow(
  { call, priced, header, services, protocol }: Acceptance,
  row: Pick<Parameters<PaymentLedger["claim"]>[0], "nonce" | "payer" | "scheme">,
): Parameters<PaymentLedger["claim"]>[0] {
  return {
    ...row,
    method: protocol,
    amount: priced.amount,
    network: services.gateway.network.id,
    resource: call.resourceUrl,
    endpoint: call.endpoint,
    model: call.quote.model,
    bodyHash: call.body.sha256,
    paymentSignature: header.value.trim(),
    quoteMs: call.quoteMs,
  };
}
