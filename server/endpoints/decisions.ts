import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { chatLimits, pricingRules } from "../../config/limits";
import { countDecisionTokens, createDecision } from "../decisions/create-decision";
import { decisionRequests } from "../decisions/decision-request";
import { ApiError } from "../errors";
import { quoteTokens } from "../pricing/quote-tokens";
import { paidEndpoint } from "./endpoint";

/** Endpoint 7: structured decisions with the catalog's decision model, paid per request; output tokens are free. */
export function decisions(catalog: ModelCatalog) {
  const model = catalog.decision;
  const requests = decisionRequests(model);
  return paidEndpoint({
    method: "POST",
    paths: ["/jev"],
    access: ["x402"],
    channels: true,
    overlapsVerify: true,
    schema: requests.schema,
    parse(value) {
      const decision = requests.parse(value);
      return { decision, inputTokens: countDecisionTokens(decision) };
    },
    quote({ decision, inputTokens }, network) {
      if (inputTokens > chatLimits.maxInputTokens) {
        throw new ApiError(
          "context_length_exceeded",
          `The decision counts ${inputTokens} input tokens; the limit is ${chatLimits.maxInputTokens}`,
          { param: "state" },
        );
      }
      const quote = quoteTokens({ model, inputTokens, maxOutputTokens: 0, network });
      const questions = Object.keys(decision.questions).length;
      return {
        ...quote,
        model: model.id,
        description: `Structured decision with ${model.id} (${questions} questions)`,
      };
    },
    async work(context, { decision, inputTokens }, grant, request) {
      const { body, provider } = await createDecision(context, decision, inputTokens, grant.signal, request.trace);
      return { kind: "json", body, provider };
    },
    docs: {
      operationId: "createDecision",
      summary: `Structured decisions with ${model.id}`,
      example: {
        model: model.id,
        state: "A customer asks to return shoes bought 40 days ago; the policy allows 30 days.",
        questions: { eligible: { type: "choice", instructions: "Is the return eligible? One of: yes, no" } },
      },
      responseDescription:
        "{model, answers: {name: {type, noul: number | choice: string | score: 0..1}}, usage: {input_tokens, output_tokens}}",
      pricing: `input tokens (state and questions) x ${model.inputUsdPerMillion} USD per 1M + settlement overhead, at least ${pricingRules.minimumChargeUsd} USD; output free`,
    },
  });
}
