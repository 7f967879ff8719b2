import { SpanKind, type Attributes } from "@opentelemetry/api";
import type { PaymentRequirements, SettleResponse, VerifyResponse } from "@x402/core/types";
import { inSpan } from "./spans";

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
  facilitator: string,
  requirements: PaymentRequirements,
  verify: () => Promise<VerifyResponse>,
): Promise<VerifyResponse> {
  return facilitatorSpan("x402.verify", termsOf(facilitator, requirements), verify, (verdict) => ({
    "x402.valid": verdict.isValid,
    ...(verdict.invalidReason && { "x402.invalid_reason": verdict.invalidReason }),
    ...(verdict.payer && { "x402.payer": verdict.payer }),
  }));
}

/** One facilitator's settle, in a client span with its outcome and transaction. */
export function settleSpan(
  facilitator: string,
  requirements: PaymentRequirements,
  amount: bigint | undefined,
  settle: () => Promise<SettleResponse>,
): Promise<SettleResponse> {
  return facilitatorSpan("x402.settle", termsOf(facilitator, requirements, amount), settle, (settlement) => ({
    "x402.success": settlement.success,
    ...(settlement.transaction && { "x402.transaction": settlement.transaction }),
    ...(settlement.errorReason && { "x402.error_reason": settlement.errorReason }),
  }));
}

/** A call to a facilitator in a client span: the terms asked about, then what its answer said. */
function facilitatorSpan<T>(
  name: string,
  terms: Attributes,
  call: () => Promise<T>,
  answered: (answer: T) => Attributes,
): Promise<T> {
  return inSpan(
    name,
    terms,
    async (span) => {
      const answer = await call();
      span?.setAttributes(answered(answer));
      return answer;
    },
    SpanKind.CLIENT,
  );
}
