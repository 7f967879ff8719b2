import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { chatLimits, pricingRules } from "../../config/limits";
import { createDecision, decisionTexts } from "../decisions/create-decision";
import { decisionRequests, type DecisionRequest } from "../decisions/decision-request";
import { ApiError } from "../core/errors";
import { countTexts, type CountedTexts } from "../pricing/quote-completion";
import { quoteTokens } from "../pricing/quote-tokens";
import { paidEndpoint } from "../context/endpoint";

/** Endpoint 7: structured decisions with the catalog's decision model, paid per request; output tokens are free. */
export function decisions(catalog: ModelCatalog) {
  const model = catalog.decision;
  const requests = decisionRequests(model);
  return paidEndpoint({
    method: "POST",
    paths: ["/jev"],
    access: ["x402"],
    callsProvider: true,
    channels: true,
    overlapsVerify: true,
    schema: requests.schema,
    // The quote counts the input (what `work` reports as the call's input tokens): stopping soon past the limit, and
    // yielding when the state is long, as every quote counts.
    parse(value): { decision: DecisionRequest; inputTokens?: number } {
      return { decision: requests.parse(value) };
    },
    quote(parsed, network) {
      const priced = ({ tokens, stopped }: CountedTexts) => {
        if (tokens > chatLimits.maxInputTokens) {
          throw new ApiError(
            "context_length_exceeded",
            `The decision counts ${stopped ? "more than " : ""}${stopped ? chatLimits.maxInputTokens : tokens} input tokens; the limit is ${chatLimits.maxInputTokens}`,
            { param: "state" },
          );
        }
        parsed.inputTokens = tokens;
        const quote = quoteTokens({ model, inputTokens: tokens, maxOutputTokens: 0, network });
        const questions = Object.keys(parsed.decision.questions).length;
        return {
          ...quote,
          model: model.id,
          description: `Structured decision with ${model.id} (${questions} questions)`,
        };
      };
      const counted = countTexts(decisionTexts(parsed.decision), chatLimits.maxInputTokens);
      return counted instanceof Promise ? counted.then(priced) : priced(counted);
    },
    async work(context, { decision, inputTokens }, grant, request) {
      const { body, provider } = await createDecision(context, decision, inputTokens!, grant.signal, request.trace);
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
