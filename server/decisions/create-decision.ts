import type { AppContext } from "../context/app-context";
import { countTextTokens } from "../pricing/count-tokens";
import { checkedAnswers } from "./decision-answer";
import type { DecisionRequest } from "./decision-request";
import type { CallTrace } from "../tracing/call-trace";

/** The texts a decision's input tokens are counted from: the state, and every question's name, type and instructions. */
export function decisionTexts(request: DecisionRequest): string[] {
  const texts = [request.state];
  for (const [name, question] of Object.entries(request.questions)) {
    texts.push(name, question.type, question.instructions);
  }
  return texts;
}

function tokenCount(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isInteger(value) && value >= 0 ? value : fallback;
}

/** The answer of a decision: the upstream's answers, checked against the questions, with the resolved model. */
export async function createDecision(
  context: Pick<AppContext, "config" | "providers">,
  decision: DecisionRequest,
  inputTokens: number,
  signal: AbortSignal | undefined,
  trace: CallTrace | undefined,
) {
  // The answers are checked inside the routes' turn: an answer of the wrong shape is the next route's to give.
  const served = await context.providers
    .of(context.config.catalog.decision, trace)
    .postJson(
      "/decisions",
      decision,
      (answer) => ({ answers: checkedAnswers(decision, answer.answers), answer }),
      signal,
    );
  const { answers, answer } = served.value;
  const usage = (answer.usage ?? {}) as Record<string, unknown>;
  return {
    provider: served.provider,
    body: {
      // The version sold (DECISION_MODEL_VERSION): the provider's own name of its model stays with it.
      model: context.config.decisionModelVersion,
      answers,
      usage: {
        input_tokens: tokenCount(usage.input_tokens, inputTokens),
        output_tokens: tokenCount(usage.output_tokens, countTextTokens(JSON.stringify(answers))),
      },
    },
  };
}
