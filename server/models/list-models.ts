import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { pricingRules } from "../../config/limits";
import type { NetworkDefinition } from "../../networks";
import { chatDialect } from "../dialects/chat-dialect";
import { messagesDialect } from "../messages/messages-dialect";
import { perMillionToPerUnit } from "../core/money";
import { responsesDialect } from "../responses/responses-dialect";

/** Where a chat model is sold: every path of each dialect's endpoint. */
const PAID_ENDPOINTS = [chatDialect, responsesDialect, messagesDialect].flatMap((dialect) => dialect.paths);

function payment(network: NetworkDefinition) {
  return {
    protocol: "x402",
    x402_version: 2,
    scheme: "exact",
    network: network.id,
    asset: network.usdc.address,
    asset_decimals: network.usdc.decimals,
  };
}

/**
 * Endpoint 13: every sellable GPT model with its limits and live prices on this deployment's network, then the
 * image models and the decision model with theirs (`type` tells them apart).
 */
export function listModels(catalog: ModelCatalog, network: NetworkDefinition) {
  const { decision: decisionModel } = catalog;
  const chat = catalog.chat.map((model) => ({
    id: model.id,
    object: "model",
    type: "chat",
    created: 0,
    owned_by: model.id.split("/")[0],
    aliases: model.aliases ?? [],
    context_length: model.contextTokens,
    max_output_tokens: model.maxOutputTokens,
    pricing: {
      currency: "USD",
      input_per_1m_tokens: model.inputUsdPerMillion,
      output_per_1m_tokens: model.outputUsdPerMillion,
      input_per_token: perMillionToPerUnit(model.inputUsdPerMillion),
      output_per_token: perMillionToPerUnit(model.outputUsdPerMillion),
      settlement_overhead_per_request: network.settlementOverheadUsd,
      minimum_charge_per_request: pricingRules.minimumChargeUsd,
      formula:
        "input tokens x input rate + max_tokens (default 4096) x output rate + settlement overhead, at least the minimum charge, rounded up to whole USDC atomic units",
    },
    payment: payment(network),
    endpoints: PAID_ENDPOINTS,
  }));
  const images = catalog.images.map((model) => ({
    id: model.id,
    object: "model",
    type: "image",
    created: 0,
    owned_by: model.id.startsWith("vendor-c") ? "vendor-c" : "vendor-a",
    sizes: model.sizes,
    max_images_per_request: 4,
    pricing: {
      currency: "USD",
      per_image: model.usdPerImage,
      settlement_overhead_per_request: network.settlementOverheadUsd,
      formula: "per-image price x n (1 to 4) + settlement overhead per request, rounded up to whole USDC atomic units",
    },
    payment: payment(network),
    endpoints: ["/api/v1/images/generations", "/api/v1/images/image2image"],
  }));
  const decision = {
    id: decisionModel.id,
    object: "model",
    type: "decision",
    created: 0,
    owned_by: "vendor-a",
    pricing: {
      currency: "USD",
      input_per_1m_tokens: decisionModel.inputUsdPerMillion,
      output_per_1m_tokens: decisionModel.outputUsdPerMillion,
      input_per_token: perMillionToPerUnit(decisionModel.inputUsdPerMillion),
      settlement_overhead_per_request: network.settlementOverheadUsd,
      minimum_charge_per_request: pricingRules.minimumChargeUsd,
      formula: "input tokens (state and questions) x input rate + settlement overhead, at least the minimum charge",
    },
    payment: payment(network),
    endpoints: ["/jev"],
  };
  return { object: "list", data: [...chat, ...images, decision] };
}
