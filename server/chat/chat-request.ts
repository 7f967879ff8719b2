import { z } from "zod";
import { chatLimits } from "../../config/limits";
import { findGptModel, gptModelIds, type GptModel } from "../../config/models";
import { ApiError } from "../errors";
import { parseOrThrow, requireJsonObject } from "../validation";

const textPart = z.looseObject({ type: z.literal("text"), text: z.string() });

const message = z.looseObject({
  role: z.enum(["system", "developer", "user", "assistant", "tool"], {
    error: "must be one of system, developer, user, assistant, tool",
  }),
  content: z
    .union([z.string(), z.array(textPart), z.null()], {
      error: "must be a string, an array of text parts, or null",
    })
    .optional(),
  name: z.string().optional(),
});

/** The fields we read; every other OpenAI field passes through to the upstream untouched. */
export const chatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(message, { error: "must be an array of messages" }).min(1, "must contain at least one message"),
  max_tokens: z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(chatLimits.maxOutputTokens, `must be at most ${chatLimits.maxOutputTokens}`)
    .optional(),
  max_completion_tokens: z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(chatLimits.maxOutputTokens, `must be at most ${chatLimits.maxOutputTokens}`)
    .optional(),
  temperature: z
    .number({ error: "must be a number" })
    .min(0, "must be at least 0")
    .max(2, "must be at most 2")
    .optional(),
  // One choice per call: the price and the reservation cover one answer's output, and `n` would multiply it.
  n: z.literal(1, { error: "must be 1: a call returns one choice" }).nullable().optional(),
  stream: z.boolean({ error: "must be a boolean" }).optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

export type ChatRequest = z.output<typeof chatRequestSchema>;

export interface ParsedChatRequest {
  body: ChatRequest;
  model: GptModel;
  /** The output cap the price is computed with: `max_completion_tokens`, else `max_tokens`, else 4096. */
  maxOutputTokens: number;
}

/** Validates a chat completion body; every failure is a 400 naming the field, raised before any 402. */
export function parseChatRequest(value: unknown): ParsedChatRequest {
  requireJsonObject(value);
  requireKnownModel((value as { model?: unknown }).model);
  const body = parseOrThrow(chatRequestSchema, value);
  const model = findGptModel(body.model) as GptModel;
  return { body, model, maxOutputTokens: body.max_completion_tokens ?? body.max_tokens ?? chatLimits.defaultMaxTokens };
}

/**
 * The body to send upstream, capped at `maxOutputTokens`, which the upstream must never exceed (it was paid or
 * reserved for): the cap goes in each cap field the caller sent, since an upstream may honour either, else in
 * `max_tokens`.
 */
export function withOutputCap(body: ChatRequest, maxOutputTokens: number): Record<string, unknown> {
  const capped: Record<string, unknown> = { ...body, max_tokens: maxOutputTokens };
  if (body.max_completion_tokens !== undefined) {
    capped.max_completion_tokens = maxOutputTokens;
    if (body.max_tokens === undefined) delete capped.max_tokens;
  }
  return capped;
}

/** Missing or unknown model: the first check, so that a caller with a typo learns the list of models. */
export function requireKnownModel(model: unknown): void {
  if (model === undefined || model === null || model === "") {
    throw new ApiError("invalid_request", "You must provide a model parameter", { param: "model" });
  }
  if (typeof model !== "string" || !findGptModel(model)) {
    throw new ApiError(
      "model_not_found",
      `The model '${String(model)}' does not exist or is not sold here. Available models: ${gptModelIds.join(", ")}`,
      { param: "model" },
    );
  }
}
