import { pricingRules } from "../../config/limits";
import type { NetworkDefinition } from "../../networks";
import { decimalToAtomic } from "../core/money";

export const MINIMUM_CHARGE_USD = pricingRules.minimumChargeUsd;

/** The amount to pay for `work` atomic units: plus the network's settlement overhead, at least the minimum. */
export function chargeFor(work: bigint, network: NetworkDefinition): bigint {
  const decimals = network.usdc.decimals;
  const total = work + decimalToAtomic(network.settlementOverheadUsd, decimals);
  const minimum = decimalToAtomic(pricingRules.minimumChargeUsd, decimals);
  return total > minimum ? total : minimum;
}
