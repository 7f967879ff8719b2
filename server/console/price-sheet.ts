import { decisionModel } from "../../config/decision-model";
import { embeddings, freeChat } from "../../config/free-tier";
import { imageModels } from "../../config/image-models";
import { chatLimits, pricingRules } from "../../config/limits";
import { gptModels } from "../../config/models";
import { prepaidPacks } from "../../config/prepaid-packs";
import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal, decimalToAtomic, divideRoundingUp } from "../money";
import { chargeFor } from "../pricing/charge";

/** Everything the console's price page shows, from the same tables that quote payments. */
export function priceSheet(network: NetworkDefinition, payTo: string) {
  const decimals = network.usdc.decimals;
  const packPrice = (usdPerMillion: string, tokens: number) =>
    atomicToDecimal(
      chargeFor(divideRoundingUp(BigInt(tokens) * decimalToAtomic(usdPerMillion, decimals), 1_000_000n), network),
      decimals,
    );
  return {
    network: { id: network.id, name: network.displayName, asset: network.usdc.address, decimals, payTo },
    overheadUsd: network.settlementOverheadUsd,
    liveGas: network.settlementGas !== undefined,
    minimumChargeUsd: pricingRules.minimumChargeUsd,
    defaultMaxTokens: chatLimits.defaultMaxTokens,
    chat: gptModels.map((model) => ({
      id: model.id,
      input: model.inputUsdPerMillion,
      output: model.outputUsdPerMillion,
      context: model.contextTokens,
      maxOutput: model.maxOutputTokens,
    })),
    images: imageModels.map((model) => ({ id: model.id, size: model.size, perImage: model.usdPerImage })),
    decision: { id: decisionModel.id, input: decisionModel.inputUsdPerMillion },
    packs: gptModels.map((model) => ({
      model: model.id,
      small: { tokens: prepaidPacks.minTokens, usd: packPrice(model.inputUsdPerMillion, prepaidPacks.minTokens) },
      large: { tokens: prepaidPacks.maxTokens, usd: packPrice(model.inputUsdPerMillion, prepaidPacks.maxTokens) },
    })),
    free: {
      chatModel: freeChat.model,
      windows: freeChat.windows.map((window) => ({ name: window.name, limit: window.limit })),
      maxTokens: freeChat.maxTokens,
      embeddingModel: embeddings.model,
      maxInputs: embeddings.maxInputs,
    },
  };
}

export type PriceSheet = ReturnType<typeof priceSheet>;
