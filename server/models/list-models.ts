import { pricingRules } from "../../config/limits";
import { gptModels } from "../../config/models";
import type { NetworkDefinition } from "../../networks";
import { perMillionToPerUnit } from "../money";

const PAID_ENDPOINTS = ["/v1/chat/completions", "/api/v1/chat/completions", "/v1/responses", "/api/v1/responses"];

/** Endpoint 13: every sellable GPT model with its limits and live prices on this deployment's network. */
export function listModels(network: NetworkDefinition) {
  return {
    object: "list",
    data: gptModels.map((model) => ({
      id: model.id,
      object: "model",
      created: 0,
      owned_by: model.id.split("/")[0],
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
      payment: {
        protocol: "x402",
        x402_version: 2,
        scheme: "exact",
        network: network.id,
        asset: network.usdc.address,
        asset_decimals: network.usdc.decimals,
      },
      endpoints: PAID_ENDPOINTS,
    })),
  };
}
