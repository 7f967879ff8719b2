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
  const attributes = termsOf(facilitator, requirements);
  return inSpan(
    "x402.verify",
    attributes,
    async (span) => {
      const verdict = await verify();
      span?.setAttributes({
        "x402.valid": verdict.isValid,
        ...(verdict.invalidReason && { "x402.invalid_reason": verdict.invalidReason }),
        ...(verdict.payer && { "x402.payer": verdict.payer }),
      });
      return verdict;
    },
    SpanKind.CLIENT,
  );
}

/** One facilitator's settle, in a client span with its outcome and transaction. */
export function settleSpan(
  facilitator: string,
  requirements: PaymentRequirements,
  amount: bigint | undefined,
  settle: () => Promise<SettleResponse>,
): Promise<SettleResponse> {
  return inSpan(
    "x402.settle",
    termsOf(facilitator, requirements, amount),
    async (span) => {
      const settlement = await settle();
      span?.setAttributes({
        "x402.success": settlement.success,
        ...(settlement.transaction && { "x402.transaction": settlement.transaction }),
        ...(settlement.errorReason && { "x402.error_reason": settlement.errorReason }),
      });
      return settlement;
    },
    SpanKind.CLIENT,
  );
}
