/** Prepaid packs: a key for one GPT model and a total token budget, sold at the model's input rate. */
export const prepaidPacks = {
  minTokens: 100_000,
  maxTokens: 1_000_000,
  stepTokens: 100_000,
  defaultModel: "vendor-a/gpt-6-luna",
  defaultTokens: 100_000,
} as const;
