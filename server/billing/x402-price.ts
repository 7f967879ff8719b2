import type { PaymentRequirements } from "@x402/core/types";
import { ApiError } from "../errors";
import { logEvent } from "../log";
import { atomicToDecimal } from "../money";
import { FacilitatorUnavailableError } from "../payment/facilitator-answers";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { HoldCodec, QuoteHold } from "../payment/quote-hold";
import type { SettlementGasEstimator } from "../payment/settlement-gas";
import type { BillableCall } from "./payment-method";

export interface PricedRequest {
  amount: bigint;
  quote: Record<string, unknown>;
  /** The `exact` requirements: pay `amount`. */
  requirements: PaymentRequirements;
  /** Where offered, the `upto` requirements: sign for at most `amount`, be charged the tokens used. */
  upto?: PaymentRequirements;
  /** The extensions a 402 offering `upto` declares (EIP-2612 gas sponsoring, where the facilitator applies it). */
  uptoExtensions?: Record<string, unknown>;
  /**
   * Where offered, the `batch-settlement` requirements: a channel's voucher for at most `amount` more, charged what
   * `upto` would charge (the tokens used) or, for a call not billed in tokens, `amount`.
   */
  batch?: PaymentRequirements;
}

/** A held quote as the database keeps it: JSON, with the amount as a decimal string. */
export const pricedRequestCodec: HoldCodec<PricedRequest> = {
  encode: (value) => JSON.stringify({ ...value, amount: value.amount.toString() }),
  decode: (text) => {
    const held = JSON.parse(text) as Omit<PricedRequest, "amount"> & { amount: string };
    return { ...held, amount: BigInt(held.amount) };
  },
};

/** Where quotes include live settlement gas: the estimator, and the hold that keeps a quote payable. */
export interface LiveGas {
  estimator: SettlementGasEstimator;
  hold: QuoteHold<PricedRequest>;
}

/**
 * The amount, quote and requirements of a call. With live gas, the gas estimate is added and the result held for
 * the requirements' lifetime per resource and body, so the signed retry matches what was quoted.
 */
export async function priceCall(gateway: PaymentGateway, call: BillableCall, gas?: LiveGas): Promise<PricedRequest> {
  const { amount, display } = call.quote;
  if (!gas) return { amount, quote: display, ...(await requirementsOrUnavailable(gateway, call, amount)) };
  const lifetimeMs = gateway.paymentTimeoutSeconds * 1000;
  return gas.hold.get(`${call.resourceUrl}\n${call.body.sha256}`, lifetimeMs, async () => {
    let estimate;
    try {
      estimate = await gas.estimator.estimate();
    } catch (error) {
      logEvent("error", "gas_estimate_failed", { error: (error as Error).message });
      throw new ApiError(
        "service_unavailable",
        "The settlement gas price cannot be read right now; nothing was charged. Retry later.",
      );
    }
    const total = amount + estimate.amount;
    const decimals = gateway.network.usdc.decimals;
    return {
      amount: total,
      quote: { ...display, ...estimate.display, total_usd: atomicToDecimal(total, decimals), amount: total.toString() },
      ...(await requirementsOrUnavailable(gateway, call, total)),
    };
  });
}

/**
 * The call's requirements: `exact` for `amount`; `upto` with `amount` as its maximum for a call billed in tokens
 * (chat, Responses, whole or streamed), where the deployment offers it; and a channel's, likewise, where offered.
 */
async function requirementsOrUnavailable(
  gateway: PaymentGateway,
  call: BillableCall,
  amount: bigint,
): Promise<Pick<PricedRequest, "requirements" | "upto" | "uptoExtensions" | "batch">> {
  const usageCharged = call.usage !== undefined && call.quote.tokens !== undefined;
  try {
    const [requirements, upto, batch] = await Promise.all([
      gateway.requirementsFor(amount),
      usageCharged ? gateway.uptoRequirementsFor(amount) : undefined,
      call.channels ? gateway.channelRequirementsFor(amount) : undefined,
    ]);
    const offers = upto ? { upto: upto.requirements, uptoExtensions: upto.extensions } : {};
    return { requirements, ...offers, ...(batch ? { batch } : {}) };
  } catch (error) {
    throw facilitatorUnavailable(error);
  }
}

/** A facilitator that cannot be asked becomes the caller's 503; anything else is left as it is. */
export function facilitatorUnavailable(error: unknown): unknown {
  if (error instanceof FacilitatorUnavailableError) {
    return new ApiError(
      "facilitator_unavailable",
      "The payment facilitator is unavailable; nothing was charged. Retry later.",
    );
  }
  return error;
}
