import { chatLimits, pricingRules } from "../../config/limits";
import { gptModels } from "../../config/models";

const rates = gptModels
  .map((model) => `${model.id} ${model.inputUsdPerMillion}/${model.outputUsdPerMillion}`)
  .join(", ");

/** How a chat completion or response is priced, in words, naming the field that caps the output. */
export function tokenPricing(capField: string): string {
  return `input tokens (o200k_base) x input rate + ${capField} (default ${chatLimits.defaultMaxTokens}, at most ${chatLimits.maxOutputTokens}) x output rate + settlement overhead, at least ${pricingRules.minimumChargeUsd} USD; USD per 1M tokens input/output: ${rates}`;
}
