/**
 * The sellable GPT models and their rates, written exactly as the spec writes them (USD per 1,000,000 tokens).
 * Every price the service quotes, lists or documents is computed from this table.
 */
export interface GptModel {
  id: string;
  inputUsdPerMillion: string;
  outputUsdPerMillion: string;
  contextTokens: number;
  maxOutputTokens: number;
}

export const GPT_MODEL_CONTEXT_TOKENS = 1_100_000;
export const GPT_MODEL_MAX_OUTPUT_TOKENS = 128_000;

export const gptModels = [
  { id: "vendor-a/gpt-5.6-sol", inputUsdPerMillion: "2.80", outputUsdPerMillion: "14.00" },
  { id: "vendor-a/gpt-5.6-terra", inputUsdPerMillion: "1.40", outputUsdPerMillion: "8.40" },
  { id: "vendor-a/gpt-6-luna", inputUsdPerMillion: "0.07", outputUsdPerMillion: "0.35" },
  { id: "vendor-a/gpt-6-sol", inputUsdPerMillion: "1.40", outputUsdPerMillion: "7.00" },
].map((model): GptModel => ({
  ...model,
  contextTokens: GPT_MODEL_CONTEXT_TOKENS,
  maxOutputTokens: GPT_MODEL_MAX_OUTPUT_TOKENS,
}));

export const gptModelIds = gptModels.map((model) => model.id);

export function findGptModel(id: string): GptModel | undefined {
  return gptModels.find((model) => model.id === id);
}
