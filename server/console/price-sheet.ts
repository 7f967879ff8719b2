import { embeddings, freeChat } from "../../config/free-tier";
import { chatLimits, pricingRules } from "../../config/limits";
import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { prepaidPacks } from "../../config/prepaid-packs";
import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal, decimalToAtomic, divideRoundingUp } from "../core/money";
import { chargeFor } from "../pricing/charge";

/** Everything the console's price page shows, from the catalog that quotes payments. */
export function priceSheet(catalog: ModelCatalog, network: NetworkDefinition, payTo: string) {
  const { chat, images, decision } = catalog;
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
    chat: chat.map((model) => ({
      id: model.id,
      input: model.inputUsdPerMillion,
      output: model.outputUsdPerMillion,
      context: model.contextTokens,
      maxOutput: model.maxOutputTokens,
    })),
    images: images.map((model) => ({ id: model.id, size: model.sizes.join(", "), perImage: model.usdPerImage })),
    decision: { id: decision.id, input: decision.inputUsdPerMillion },
    packs: chat.map((model) => ({
      model: model.id,
      small: { tokens: prepaidPacks.minTokens, usd: packPrice(model.inputUsdPerMillion, prepaidPacks.minTokens) },
      large: { tokens: prepaidPacks.maxTokens, usd: packPrice(model.inputUsdPerMillion, prepaidPacks.maxTokens) },
    })),
    free: {
      chatModel: catalog.freeChat.id,
      windows: freeChat.windows.map((window) => ({ name: window.name, limit: window.limit })),
      maxTokens: freeChat.maxTokens,
      embeddingModel: catalog.embeddings.id,
      maxInputs: embeddings.maxInputs,
    },
  };
}

export type PriceSheet = ReturnType<typeof priceSheet>;
