/**
 * The canonical chat wire, as far as the Messages translation reads and writes it. These types mirror the canonical
 * chat completion shapes (request, whole answer, stream chunk, usage with the cost fields billing appends); they are
 * declared here until the canonical chat wire types live in one place (server/chat/chat-wire.ts), to which they are
 * to point then.
 */

export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A chat content part: text, or an image as a URL (a data URL for inline images). */
export type ChatContentPart = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string | ChatContentPart[] | null;
  tool_calls?: ChatToolCall[];
  tool_call_id?: string;
}

export interface ChatTool {
  type: "function";
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

export type ChatToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

/** A canonical chat request: its messages, and any other field. */
export interface ChatRequestBody {
  model: string;
  messages: ChatMessage[];
  max_tokens: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  stream?: true;
  stream_options?: { include_usage: true };
  tools?: ChatTool[];
  tool_choice?: ChatToolChoice;
  user?: string;
  [field: string]: unknown;
}

/**
 * Canonical usage: the token counts, and the cost fields billing appends (x402: cost, cost_details; prepaid: cost,
 * prepaid_charged_tokens, prepaid_remaining_tokens), kept as they are.
 */
export interface ChatUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
  [field: string]: unknown;
}

export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

/** A whole canonical answer (`chat.completion`). */
export interface ChatCompletion {
  id?: string;
  object?: "chat.completion";
  created?: number;
  model?: string;
  choices: {
    index?: number;
    message: {
      role?: "assistant";
      content?: string | null;
      tool_calls?: ChatToolCall[];
      reasoning_content?: string;
    };
    finish_reason?: ChatFinishReason | string | null;
  }[];
  usage?: ChatUsage;
}

export interface ChatToolCallDelta {
  index?: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** One canonical stream chunk (`chat.completion.chunk`), the usage-only chunk, or an error event's object. */
export interface ChatChunk {
  id?: string;
  object?: "chat.completion.chunk";
  created?: number;
  model?: string;
  choices?: {
    index?: number;
    delta?: {
      role?: "assistant";
      content?: string | null;
      reasoning_content?: string | null;
      tool_calls?: ChatToolCallDelta[];
    };
    finish_reason?: ChatFinishReason | string | null;
  }[];
  usage?: ChatUsage | null;
  error?: { message?: string; type?: string; code?: string | null };
}

/**
 * Whether an event is a comment alone (a provider's keep-alive): no data, and no JSON either (an event made here
 * with SseEvent.of has JSON but no data text until it is written).
 */
export function isComment(event: { data: string | undefined; json(): unknown }): boolean {
  return event.data === undefined && event.json() === undefined;
}

/** The token counts of canonical usage; every other field is a cost field billing appended. */
const TOKEN_FIELDS = new Set([
  "prompt_tokens",
  "completion_tokens",
  "total_tokens",
  "prompt_tokens_details",
  "completion_tokens_details",
]);

/** The cost fields of canonical usage (everything but the token counts), to state beside another API's counts. */
export function costFields(usage: ChatUsage | null | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(usage ?? {})) if (!TOKEN_FIELDS.has(field)) fields[field] = value;
  return fields;
}
