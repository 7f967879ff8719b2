import { decisionModel } from "../../config/decision-model";
import { chatLimits } from "../../config/limits";
import { resourceUrl, type AppContext } from "../app-context";
import { ApiError } from "../errors";
import { readJsonBody } from "../http/read-json-body";
import { runPaidRequest } from "../payment/paid-request";
import { countTextTokens } from "../pricing/count-tokens";
import { quoteTokens } from "../pricing/quote-tokens";
import { checkedAnswers } from "./decision-answer";
import { parseDecisionRequest, type DecisionRequest } from "./decision-request";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/** Input tokens of a decision: the state plus every question's name, type and instructions. */
export function countDecisionTokens(request: DecisionRequest): number {
  return Object.entries(request.questions).reduce(
    (total, [name, question]) =>
      total + countTextTokens(name) + countTextTokens(question.type) + countTextTokens(question.instructions),
    countTextTokens(request.state),
  );
}

function tokenCount(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** Endpoint 7: structured decisions with `jev-latest`, paid per request; output tokens are free. */
export async function createDecision(context: AppContext, request: ApiRequest): Promise<ApiAnswer> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const decision = parseDecisionRequest(body.value);
  const inputTokens = countDecisionTokens(decision);
  if (inputTokens > chatLimits.maxInputTokens) {
    throw new ApiError(
      "context_length_exceeded",
      `The decision counts ${inputTokens} input tokens; the limit is ${chatLimits.maxInputTokens}`,
      {
        param: "state",
      },
    );
  }
  const quote = quoteTokens({ model: decisionModel, inputTokens, maxOutputTokens: 0, network: context.config.network });
  return runPaidRequest(context, {
    request,
    resourceUrl: resourceUrl(context, request),
    description: `Structured decision with ${decisionModel.id} (${Object.keys(decision.questions).length} questions)`,
    amount: quote.amount,
    quote: quote.display,
    bodySha256: body.sha256,
    quoteMs: performance.now() - started,
    work: async () => {
      const answer = await context.decisionUpstream.postJson("/decisions", decision);
      const answers = checkedAnswers(decision, answer.answers);
      const usage = (answer.usage ?? {}) as Record<string, unknown>;
      const resolved = typeof answer.model === "string" && answer.model !== decisionModel.id ? answer.model : undefined;
      return {
        kind: "json",
        body: {
          model: resolved ?? context.config.decisionModelVersion,
          answers,
          usage: {
            input_tokens: tokenCount(usage.input_tokens, inputTokens),
            output_tokens: tokenCount(usage.output_tokens, countTextTokens(JSON.stringify(answers))),
          },
        },
      };
    },
  });
}
