import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { chatLimits, pricingRules } from "../../config/limits";

/** How a chat completion or response is priced, in words, naming the field that caps the output. */
export function tokenPricing(catalog: ModelCatalog, capField: string): string {
  const rates = catalog.chat
    .map((model) => `${model.id} ${model.inputUsdPerMillion}/${model.outputUsdPerMillion}`)
    .join(", ");
  return `input tokens (o200k_base) x input rate + ${capField} (default ${chatLimits.defaultMaxTokens}, at most ${chatLimits.maxOutputTokens}) x output rate + settlement overhead, at least ${pricingRules.minimumChargeUsd} USD; USD per 1M tokens input/output: ${rates}`;
}
