import { z } from "zod";
import { chatLimits } from "../../config/limits";
import type { ChatModel, ModelCatalog } from "../../config/catalog/model-catalog";
import { functionName, functionParameters } from "../chat/chat-fields";
import { requireKnownModel, requireOutputWithin } from "../chat/chat-request";
import { ApiError } from "../core/errors";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { refuseUnknownOrPricedFields } from "./messages-fields";

/** Anthropic's request shapes (the official SDK's MessageCreateParams), checked so a wrong value is a 400. */

const cacheControl = { cache_control: z.unknown().optional() };

const textBlock = z.looseObject({
  type: z.literal("text"),
  text: z.string({ error: "must be a string" }),
  ...cacheControl,
});

const imageSource = z.discriminatedUnion(
  "type",
  [
    z.looseObject({
      type: z.literal("base64"),
      media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"], {
        error: "must be image/jpeg, image/png, image/gif or image/webp",
      }),
      data: z.string({ error: "must be a base64 string" }),
    }),
    z.looseObject({ type: z.literal("url"), url: z.string().url("must be a URL") }),
  ],
  { error: "must be {type: base64, media_type, data} or {type: url, url}" },
);

const imageBlock = z.looseObject({ type: z.literal("image"), source: imageSource, ...cacheControl });

const toolUseBlock = z.looseObject({
  type: z.literal("tool_use"),
  id: z.string({ error: "must be a string" }),
  name: functionName,
  input: z.record(z.string(), z.unknown(), { error: "must be an object" }),
  ...cacheControl,
});

const toolResultBlock = z.looseObject({
  type: z.literal("tool_result"),
  tool_use_id: z.string({ error: "must be a string" }),
  content: z
    .union([z.string(), z.array(z.discriminatedUnion("type", [textBlock, imageBlock]))], {
      error: "must be a string or an array of text and image blocks",
    })
    .optional(),
  is_error: z.boolean({ error: "must be a boolean" }).optional(),
  ...cacheControl,
});

const thinkingBlock = z.looseObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() });
const redactedThinkingBlock = z.looseObject({ type: z.literal("redacted_thinking"), data: z.string() });

const contentBlock = z.discriminatedUnion(
  "type",
  [textBlock, imageBlock, toolUseBlock, toolResultBlock, thinkingBlock, redactedThinkingBlock],
  { error: "must be a text, image, tool_use, tool_result, thinking or redacted_thinking block" },
);

/** A turn; `system` as the newest SDK allows it among the messages (text only), besides the top-level `system`. */
const message = z.looseObject({
  role: z.enum(["user", "assistant", "system"], { error: "must be user, assistant or system" }),
  content: z.union([z.string(), z.array(contentBlock)], { error: "must be a string or an array of content blocks" }),
});

/** A custom tool (no type, or "custom"); any other type is a tool the provider runs or a client tool of its own. */
const customTool = z.looseObject({
  type: z.literal("custom").optional(),
  name: functionName,
  description: z.string({ error: "must be a string" }).optional(),
  input_schema: functionParameters,
  ...cacheControl,
});

const typedTool = z.looseObject({ type: z.string().refine((type) => type !== "custom"), name: z.string() });

const toolChoice = z.discriminatedUnion(
  "type",
  [
    z.looseObject({ type: z.literal("auto"), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal("any"), disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal("tool"), name: functionName, disable_parallel_tool_use: z.boolean().optional() }),
    z.looseObject({ type: z.literal("none") }),
  ],
  { error: "must be {type: auto}, {type: any}, {type: tool, name} or {type: none}" },
);

const maxTokens = z
  .number({ error: "must be an integer" })
  .int("must be an integer")
  .min(1, "must be at least 1")
  .max(chatLimits.maxOutputTokens, `must be at most ${chatLimits.maxOutputTokens}`);

export const messagesRequestSchema = z.looseObject({
  model: z.string(),
  max_tokens: maxTokens,
  messages: z.array(message, { error: "must be an array of messages" }).min(1, "must contain at least one message"),
  system: z
    .union([z.string(), z.array(textBlock)], { error: "must be a string or an array of text blocks" })
    .optional(),
  temperature: z
    .number({ error: "must be a number" })
    .min(0, "must be at least 0")
    .max(1, "must be at most 1")
    .optional(),
  top_p: z.number({ error: "must be a number" }).min(0, "must be at least 0").max(1, "must be at most 1").optional(),
  top_k: z.number({ error: "must be an integer" }).int("must be an integer").min(0, "must be at least 0").optional(),
  stop_sequences: z.array(z.string(), { error: "must be an array of strings" }).optional(),
  stream: z.boolean({ error: "must be a boolean" }).optional(),
  tools: z.array(z.union([customTool, typedTool]), { error: "must be an array of tools" }).optional(),
  tool_choice: toolChoice.optional(),
  metadata: z.looseObject({ user_id: z.string({ error: "must be a string" }).nullish() }).optional(),
  thinking: z.looseObject({ type: z.string({ error: "must be a string" }) }).optional(),
});

export type MessagesRequest = z.output<typeof messagesRequestSchema>;
export type MessageParam = MessagesRequest["messages"][number];
export type ContentBlockParam = Exclude<MessageParam["content"], string>[number];
export type CustomTool = z.output<typeof customTool>;

export interface ParsedMessagesRequest {
  body: MessagesRequest;
  model: ChatModel;
  /** The output cap the price is computed with: `max_tokens`, which Messages requires. */
  maxOutputTokens: number;
}

/** Whether a tool is a custom one (translated to a chat function); other types are dropped when translating. */
export function isCustomTool(tool: NonNullable<MessagesRequest["tools"]>[number]): tool is CustomTool {
  return tool.type === undefined || tool.type === "custom";
}

/**
 * Validates a Messages body (`POST /v1/messages`): the model first (so a typo learns the list), then fields whose
 * cost the price does not cover and unknown fields, then the schema; every failure is a 400 naming the field.
 */
export function parseMessagesRequest(value: unknown, catalog: ModelCatalog): ParsedMessagesRequest {
  requireJsonObject(value);
  const model = requireKnownModel(value.model, catalog);
  refuseUnknownOrPricedFields(value);
  if (!("max_tokens" in value)) {
    throw new ApiError("invalid_request", "max_tokens: Field required", { param: "max_tokens" });
  }
  if (!("messages" in value)) throw new ApiError("invalid_request", "messages: Field required", { param: "messages" });
  const body = parseOrThrow(messagesRequestSchema, value);
  requireOutputWithin(model, body.max_tokens, "max_tokens");
  refuseImagesOutsideUserTurns(body);
  return { body, model, maxOutputTokens: body.max_tokens };
}

/** Images are read in user turns (and their tool results) only: elsewhere they would be sent unpriced, or lost. */
function refuseImagesOutsideUserTurns(body: MessagesRequest): void {
  body.messages.forEach((turn, index) => {
    if (turn.role === "user" || typeof turn.content === "string") return;
    const at = turn.content.findIndex((block) => block.type === "image");
    if (at < 0) return;
    const param = `messages[${index}].content[${at}]`;
    throw new ApiError("invalid_request", `${param}: an image may only be in a user turn, not a ${turn.role} one`, {
      param,
    });
  });
}

/**
 * Validates a count_tokens body (`POST /v1/messages/count_tokens`): a Messages request without `max_tokens`, which
 * counting does not need (the answer counts input only).
 */
export function parseCountTokensRequest(value: unknown, catalog: ModelCatalog): ParsedMessagesRequest {
  requireJsonObject(value);
  const withCap = "max_tokens" in value ? value : { ...value, max_tokens: 1 };
  return parseMessagesRequest(withCap, catalog);
}
