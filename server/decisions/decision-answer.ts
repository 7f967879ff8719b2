import type { DecisionQuestionType } from "../../config/decision-model";
import { UpstreamError } from "../upstream/upstream-error";
import type { DecisionRequest } from "./decision-request";

export type DecisionAnswer =
  { type: "noul"; noul: number } | { type: "choice"; choice: string } | { type: "score"; score: number };

function fits(type: DecisionQuestionType, value: unknown): boolean {
  switch (type) {
    case "noul":
      return typeof value === "number" && Number.isFinite(value);
    case "choice":
      return typeof value === "string" && value.length > 0;
    case "score":
      return typeof value === "number" && value >= 0 && value <= 1;
  }
}

/**
 * The upstream's answers, checked against the questions: one per question, each of the question's type with its
 * value under a key named like the type (noul: a number, choice: a non-empty string, score: 0 to 1). Anything
 * else is a failed upstream call, so nothing is settled.
 */
export function checkedAnswers(request: DecisionRequest, upstreamAnswers: unknown): Record<string, DecisionAnswer> {
  if (typeof upstreamAnswers !== "object" || upstreamAnswers === null) {
    throw new UpstreamError("protocol", "decision upstream sent no answers object");
  }
  const answers: Record<string, DecisionAnswer> = {};
  for (const [name, question] of Object.entries(request.questions)) {
    const answer = (upstreamAnswers as Record<string, Record<string, unknown> | undefined>)[name];
    const value = answer?.[question.type];
    if (answer?.type !== question.type || !fits(question.type, value)) {
      throw new UpstreamError(
        "protocol",
        `decision upstream answered question '${name}' with an answer of the wrong shape`,
      );
    }
    answers[name] = { type: question.type, [question.type]: value } as DecisionAnswer;
  }
  const extra = Object.keys(upstreamAnswers).find((name) => !(name in request.questions));
  if (extra) throw new UpstreamError("protocol", `decision upstream answered a question not asked: '${extra}'`);
  return answers;
}
