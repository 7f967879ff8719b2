import { errorAnswer } from "../http/api-answer";
import type { ChatModel } from "../../config/catalog/model-catalog";
import type { Dialect } from "./dialect";
import { tokenPricing } from "../context/pricing-text";
import { eachEvent, type SseEvent } from "../http/event-stream";
import { BEARER } from "../auth/key-principal";
import { chatRequestSchema, parseChatRequest, type ChatRequest } from "../chat/chat-request";
import type { ChatRequestBody } from "../chat/chat-wire";

/** A chat completion request, parsed: the canonical call is the request itself. */
export interface ChatCall {
  body: ChatRequest;
  model: ChatModel;
  chatRequest: ChatRequestBody;
  maxOutputTokens: number;
  stream: boolean;
}

/**
 * A chunk of `choices: []` with a `usage` field: the usage-only chunk that ends the canonical stream, which a caller
 * sees only when it asked for it (`stream_options.include_usage`).
 */
function isUsageOnly(event: SseEvent): boolean {
  const chunk = event.json();
  return chunk !== undefined && Array.isArray(chunk.choices) && chunk.choices.length === 0 && "usage" in chunk;
}

/**
 * OpenAI's chat completions (endpoints 1 and 2): the canonical wire itself, but for the usage-only chunk, which the
 * stream shows only to a caller who asked for usage.
 */
export const chatDialect: Dialect<ChatCall> = {
  name: "Chat completion",
  paths: ["/v1/chat/completions", "/api/v1/chat/completions"],
  schema: chatRequestSchema,
  parse(value, catalog) {
    const { body, model, maxOutputTokens } = parseChatRequest(value, catalog);
    return { body, model, chatRequest: body, maxOutputTokens, stream: body.stream === true };
  },
  encodeAnswer: (_parsed, completion) => completion,
  encodeStream(parsed, canonical) {
    if (parsed.body.stream_options?.include_usage === true) return canonical;
    return eachEvent(canonical, (event) => (isUsageOnly(event) ? undefined : event));
  },
  errorAnswer: (error) => errorAnswer(error),
  keyCarriers: BEARER,
  docs: (catalog) => ({
    operationId: "createChatCompletion",
    summary: "Chat completion (paid per request; prepaid key accepted)",
    example: { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "Hello" }], max_tokens: 256 },
    responseDescription:
      "chat.completion, or a text/event-stream of chat.completion.chunk events ending with data: [DONE]",
    pricing: tokenPricing(catalog, "max_tokens"),
    streaming: true,
  }),
};
