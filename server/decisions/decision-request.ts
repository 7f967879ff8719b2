import { z } from "zod";
import type { DecisionModel } from "../../config/catalog/model-catalog";
import { decisionLimits, decisionQuestionTypes } from "../../config/decision-model";
import { ApiError } from "../core/errors";
import { parseOrThrow, requireJsonObject } from "../core/validation";

const question = z.object({
  type: z.enum(decisionQuestionTypes, { error: `must be one of ${decisionQuestionTypes.join(", ")}` }),
  instructions: z.string({ error: "must be a string" }).min(1, "must not be empty"),
});

/** The request of the catalog's decision model: its schema, built once, and the parser that checks with it. */
export function decisionRequests(model: DecisionModel) {
  const schema = decisionRequestFields(model.id);
  return { schema, parse: (value: unknown) => parseDecisionRequest(value, model, schema) };
}

const decisionRequestFields = (modelId: string) =>
  z.object({
    model: z.literal(modelId),
    state: z.string({ error: "must be a string" }).min(1, "must not be empty"),
    questions: z
      .record(z.string().regex(/^[\w.-]{1,64}$/), question, {
        // The record's own failures: not an object, or a name it refuses (zod reports the key's issue as its own).
        error: (issue) =>
          issue.code === "invalid_type"
            ? "must be an object of named questions"
            : issue.code === "invalid_key"
              ? "question names are 1 to 64 letters, digits, _ . or -"
              : undefined,
      })
      .refine((value) => Object.keys(value).length >= decisionLimits.minQuestions, "must contain at least one question")
      .refine(
        (value) => Object.keys(value).length <= decisionLimits.maxQuestions,
        `must contain at most ${decisionLimits.maxQuestions} questions`,
      ),
  });

export type DecisionRequest = z.output<ReturnType<typeof decisionRequestFields>>;

/** Validates a decision request; chat and Responses bodies are told where they belong. */
function parseDecisionRequest(
  value: unknown,
  decisionModel: DecisionModel,
  schema: ReturnType<typeof decisionRequestFields>,
): DecisionRequest {
  requireJsonObject(value);
  for (const [field, endpoint] of [
    ["messages", "/v1/chat/completions"],
    ["input", "/v1/responses"],
  ] as const) {
    if (field in value) {
      throw new ApiError(
        "invalid_request",
        `POST /jev takes a decision request {model: "${decisionModel.id}", state, questions}, not a chat or Responses request; send '${field}' requests to ${endpoint}`,
        { param: field },
      );
    }
  }
  const model = (value as { model?: unknown }).model;
  if (model === undefined || model === null || model === "") {
    throw new ApiError("invalid_request", "You must provide a model parameter", { param: "model" });
  }
  if (model !== decisionModel.id) {
    throw new ApiError("model_not_found", `The decision model is '${decisionModel.id}', not '${String(model)}'`, {
      param: "model",
    });
  }
  // zod skips a `__proto__` key (JSON.parse makes it an own property): the question would vanish unpriced.
  const questions = (value as { questions?: unknown }).questions;
  if (typeof questions === "object" && questions !== null && Object.hasOwn(questions, "__proto__")) {
    throw new ApiError("invalid_request", "Invalid 'questions.__proto__': a question cannot be named __proto__", {
      param: "questions.__proto__",
    });
  }
  return parseOrThrow(schema, value);
}
