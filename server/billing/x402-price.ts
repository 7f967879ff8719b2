import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import { atomicToDecimal } from "../core/money";
import { FacilitatorUnavailableError } from "../payment/facilitator-answers";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { HoldCodec, QuoteHold } from "../payment/quote-hold";
import type { SettlementGasEstimator } from "../payment/settlement-gas";
import type { BillableCall } from "./payment-method";
import type { PaymentScheme, PricedRequest } from "./schemes/payment-scheme";

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
export async function priceCall(
  gateway: PaymentGateway,
  call: BillableCall,
  schemes: readonly PaymentScheme[],
  gas?: LiveGas,
): Promise<PricedRequest> {
  const { amount, display } = call.quote;
  if (!gas) return { amount, quote: display, offers: await offersOrUnavailable(gateway, call, schemes, amount) };
  const lifetimeMs = gateway.paymentTimeoutSeconds * 1000;
  return gas.hold.get(`offers\n${call.resourceUrl}\n${call.body.sha256}`, lifetimeMs, async () => {
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
      offers: await offersOrUnavailable(gateway, call, schemes, total),
    };
  });
}

/**
 * What each scheme offers for the call, `amount` being what it pays (`exact`) or the most it may be charged (the
 * others, where offered: `upto` for calls billed in tokens, a channel's voucher where the deployment offers them).
 */
async function offersOrUnavailable(
  gateway: PaymentGateway,
  call: BillableCall,
  schemes: readonly PaymentScheme[],
  amount: bigint,
): Promise<PricedRequest["offers"]> {
  try {
    const offers = await Promise.all(schemes.map((scheme) => scheme.offer(gateway, call, amount)));
    // Keyed by scheme; `exact` is offered for every call (a hold of another shape is under another key).
    const entries = schemes.flatMap((scheme, i) => (offers[i] ? [[scheme.name, offers[i]] as const] : []));
    return Object.fromEntries(entries) as PricedRequest["offers"];
  } catch (error) {
    throw facilitatorUnavailable(error);
  }
}

/** How long a caller told no facilitator answers waits: long enough for a probe, short beside an outage. */
const FACILITATOR_RETRY_AFTER_SECONDS = 10;

/** A facilitator that cannot be asked becomes the caller's 503 with Retry-After; anything else is left as it is. */
export function facilitatorUnavailable(error: unknown): unknown {
  if (error instanceof FacilitatorUnavailableError) {
    // The caller is told to come back; why (which facilitator, what it said) is for the operator.
    logEvent("warn", "facilitator_unavailable", { error: error.message });
    return new ApiError(
      "facilitator_unavailable",
      `The payment facilitator is unavailable; nothing was charged. Retry in ${FACILITATOR_RETRY_AFTER_SECONDS} s.`,
      { headers: { "Retry-After": String(FACILITATOR_RETRY_AFTER_SECONDS) } },
    );
  }
  return error;
}
