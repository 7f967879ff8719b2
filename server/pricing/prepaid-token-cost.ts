import type { ChatModel } from "../../config/catalog/model-catalog";
import { decimalToAtomic, divideRoundingUp } from "../core/money";

const TOKENS_PER_RATE_UNIT = 1_000_000n;

/**
 * What `tokens` of a prepaid key are worth, in atomic units: a pack sells every token, input or output, at its
 * model's input rate (the settlement fee is paid once, with the pack), so a call's tokens cost that rate, exact
 * until one final round up to a whole atomic unit.
 */
export function prepaidTokensCost(
  model: Pick<ChatModel, "inputUsdPerMillion">,
  tokens: number,
  decimals: number,
): bigint {
  const rate = decimalToAtomic(model.inputUsdPerMillion, decimals);
  return divideRoundingUp(BigInt(tokens) * rate, TOKENS_PER_RATE_UNIT);
}
