import type { PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { SpanKind, type AttributeValue, type Attributes, type Span } from "./span";
import { activeTracer, inSpan } from "./tracing";

/**
 * The facilitator span a payment's call is made in, found by the facilitator's HTTP client (facilitator-auth.ts)
 * for its `traceparent`: x402's resource server calls that client with the payment and nothing of ours. Keyed by
 * the payment's `accepted` terms (v2), which the resource server passes on as they are even when it rewrites the
 * payload for a settlement; by the payload itself in v1, which has none.
 */
const callsInFlight = new WeakMap<object, Span>();
const keyOf = (payload: PaymentPayload): object => (payload as { accepted?: object }).accepted ?? payload;

/** The span of the facilitator call being made for `payload`, if tracing is on. */
export function facilitatorCallSpan(payload: PaymentPayload): Span | undefined {
  return callsInFlight.get(keyOf(payload));
}

/** What a facilitator is asked about, as span attributes: who, which scheme and network, how much. */
function termsOf(facilitator: string, requirements: PaymentRequirements, amount?: bigint): Attributes {
  return {
    "paysvc.facilitator": facilitator,
    "x402.scheme": requirements.scheme,
    "x402.network": requirements.network,
    "x402.amount": amount === undefined ? requirements.amount : amount.toString(),
    "x402.asset": requirements.asset,
  };
}

/** One facilitator's verify, in a client span with its verdict. */
export function verifySpan(
  parent: Span | undefined,
  facilitator: string,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  verify: () => Promise<VerifyResponse>,
): Promise<VerifyResponse> {
  if (!activeTracer()) return verify();
  const terms = termsOf(facilitator, requirements);
  return facilitatorSpan("x402.verify", parent, payload, terms, verify, (verdict) => ({
    "x402.valid": verdict.isValid,
    "x402.invalid_reason": verdict.invalidReason || undefined,
    "x402.payer": verdict.payer || undefined,
  }));
}

/** One facilitator's settle, in a client span with its outcome and transaction. */
export function settleSpan(
  parent: Span | undefined,
  facilitator: string,
  payload: PaymentPayload,
  requirements: PaymentRequirements,
  amount: bigint | undefined,
  settle: () => Promise<SettleResponse>,
): Promise<SettleResponse> {
  if (!activeTracer()) return settle();
  const terms = termsOf(facilitator, requirements, amount);
  return facilitatorSpan("x402.settle", parent, payload, terms, settle, (settlement) => ({
    "x402.success": settlement.success,
    "x402.transaction": settlement.transaction || undefined,
    "x402.error_reason": settlement.errorReason || undefined,
  }));
}

/** A call to a facilitator in a client span: the terms asked about, then what its answer said. */
function facilitatorSpan<T>(
  name: string,
  parent: Span | undefined,
  payload: PaymentPayload,
  terms: Attributes,
  call: () => Promise<T>,
  answered: (answer: T) => Record<string, AttributeValue | undefined>,
): Promise<T> {
  return inSpan(
    name,
    parent,
    terms,
    async (span) => {
      const key = keyOf(payload);
      if (span) callsInFlight.set(key, span);
      try {
        const answer = await call();
        span?.setAttributes(answered(answer));
        return answer;
      } finally {
        if (span && callsInFlight.get(key) === span) callsInFlight.delete(key);
      }
    },
    SpanKind.CLIENT,
  );
}
