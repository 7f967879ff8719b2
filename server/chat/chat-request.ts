import { z } from "zod";
import { chatLimits } from "../../config/limits";
import { findChatModel, type ChatModel, type ModelCatalog } from "../../config/catalog/model-catalog";
import { ApiError } from "../core/errors";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { chatFields, messageRole, messageToolFields } from "./chat-fields";
import type { ChatRequestBody } from "./chat-wire";
import { forwardedChatFields } from "./priced-fields";

const textPart = z.looseObject({ type: z.literal("text"), text: z.string() });

/** An image, read and priced where the model reads images (vision/image-parts.ts). */
const imagePart = z.looseObject({
  type: z.literal("image_url"),
  image_url: z.looseObject({
    url: z.string({ error: "must be a string: an https URL or a data URL" }),
    detail: z.enum(["low", "high", "auto"], { error: "must be low, high or auto" }).optional(),
  }),
});

/**
 * Text and images: every other part (input_audio, file) is refused, since the price covers only the tokens of
 * text and of images.
 */
const contentPart = z.discriminatedUnion("type", [textPart, imagePart], {
  error: "must be a text or image_url part (audio and file parts are not priced here)",
});

const message = z.looseObject({
  role: messageRole,
  content: z
    .union([z.string(), z.array(contentPart), z.null()], {
      error: "must be a string, an array of text and image_url parts, or null",
    })
    .optional(),
  name: z.string().optional(),
  ...messageToolFields,
});

/**
 * The fields we read, and the OpenAI fields whose values we check (chat-fields.ts, as the free chat does): a wrong
 * value is a 400 before the 402, not a provider's 4xx after the payment. The other forwarded fields (an allow-list,
 * priced-fields.ts) pass through to the upstream untouched, and are counted into the input price
 * (pricing/count-tokens.ts).
 */
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
  ...chatFields,
  // One choice per call: the price and the reservation cover one answer's output, and `n` would multiply it.
  n: z.literal(1, { error: "must be 1: a call returns one choice" }).nullable().optional(),
});

export type ChatRequest = z.output<typeof chatRequestSchema>;

export interface ParsedChatRequest {
  body: ChatRequest;
  model: ChatModel;
  /**
   * The output cap the price is computed with: `max_completion_tokens`, else `max_tokens`, else the default (4096,
   * or less where the model writes less).
   */
  maxOutputTokens: number;
}

/**
 * Validates a chat completion body; every failure is a 400 naming the field, raised before any 402 (a field whose
 * cost the price does not cover, or that is not forwarded, included).
 */
export function parseChatRequest(value: unknown, catalog: ModelCatalog): ParsedChatRequest {
  requireJsonObject(value);
  const model = requireKnownModel((value as { model?: unknown }).model, catalog);
  const body = parseOrThrow(chatRequestSchema, forwardedChatFields(value));
  const maxOutputTokens = body.max_completion_tokens ?? body.max_tokens ?? defaultOutputCap(model);
  requireOutputWithin(
    model,
    maxOutputTokens,
    body.max_completion_tokens === undefined ? "max_tokens" : "max_completion_tokens",
  );
  return { body, model, maxOutputTokens };
}

/**
 * The output cap of a call that names none: the spec's 4096, or the model's own maximum where the catalog gives it
 * less (refusing a cap the caller never sent would leave no way to call the model without one).
 */
export function defaultOutputCap(model: ChatModel): number {
  return Math.min(chatLimits.defaultMaxTokens, model.maxOutputTokens);
}

/** A model of the catalog may allow less output than any model may (its own max_output_tokens). */
export function requireOutputWithin(model: ChatModel, maxOutputTokens: number, param: string): void {
  if (maxOutputTokens <= model.maxOutputTokens) return;
  throw new ApiError(
    "invalid_request",
    `Invalid '${param}': ${model.id} writes at most ${model.maxOutputTokens} tokens; ask for ${model.maxOutputTokens} or fewer`,
    { param },
  );
}

/**
 * The body to send upstream, capped at `maxOutputTokens`, which the upstream must never exceed (it was paid or
 * reserved for): the cap goes in each cap field the caller sent, since an upstream may honour either, else in
 * `max_tokens`.
 */
export function withOutputCap(body: ChatRequestBody, maxOutputTokens: number): ChatRequestBody {
  const capped: ChatRequestBody = { ...body, max_tokens: maxOutputTokens };
  if (body.max_completion_tokens !== undefined) {
    capped.max_completion_tokens = maxOutputTokens;
    if (body.max_tokens === undefined) delete capped.max_tokens;
  }
  return capped;
}

/** Missing or unknown model: the first check, so that a caller with a typo learns the list of models. */
export function requireKnownModel(model: unknown, catalog: ModelCatalog): ChatModel {
  if (model === undefined || model === null || model === "") {
    throw new ApiError("invalid_request", "You must provide a model parameter", { param: "model" });
  }
  const found = typeof model === "string" ? findChatModel(catalog, model) : undefined;
  if (!found) {
    throw new ApiError(
      "model_not_found",
      `The model '${String(model)}' does not exist or is not sold here. Available models: ${catalog.chat.map((chat) => chat.id).join(", ")}`,
      { param: "model" },
    );
  }
  return found;
}
