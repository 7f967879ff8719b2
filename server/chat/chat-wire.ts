import { errorObject } from "../core/errors";
import { SseEvent } from "../http/event-stream";

/**
 * The canonical chat wire: OpenAI's chat completion shapes as the providers speak them and as billing meters them,
 * declared once. Every dialect translates its own API to and from these (server/dialects/dialect.ts). What comes from
 * a provider is read loosely: a field may be missing, and fields not named here pass through untouched.
 */

/** A function call the assistant made, in a whole message. */
export interface ChatToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A content part of a message (text; an image where the model takes one). */
export type ChatContentPart = { type: string; text?: string } & Record<string, unknown>;

/** One message of a chat request. */
export interface ChatMessage {
  role: string;
  content?: string | ChatContentPart[] | null;
  name?: string;
  tool_calls?: ChatToolCall[] | null;
  tool_call_id?: string | null;
}

/** A function the model may call. */
export interface ChatTool {
  type: "function";
  function: { name: string; description?: string | null; parameters?: unknown; strict?: boolean | null };
}

/** A chat completion request as sent upstream: its messages, and any other field of OpenAI's. */
export type ChatRequestBody = Record<string, unknown> & {
  model?: string;
  messages: ChatMessage[];
  max_tokens?: number | null;
  max_completion_tokens?: number | null;
  stream?: boolean | null;
  stream_options?: { include_usage?: boolean | null } | null;
  tools?: ChatTool[] | null;
  tool_choice?: unknown;
};

/** The usage of a completion; billing appends what the call cost (COST_FIELDS). */
export type ChatUsage = Record<string, unknown> & {
  prompt_tokens?: number;
  completion_tokens?: number;
  total_tokens?: number;
};

/** The fields billing appends to a paid answer's usage (billing/answer-cost.ts), which every dialect states. */
export const COST_FIELDS = ["cost", "cost_details", "prepaid_charged_tokens", "prepaid_remaining_tokens"] as const;

/** The cost fields of a usage object, for a dialect to state in its own usage. */
export function costFieldsOf(usage: ChatUsage | null | undefined): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (!usage) return fields;
  for (const field of COST_FIELDS) if (usage[field] !== undefined) fields[field] = usage[field];
  return fields;
}

/** What a completion and each of its chunks begin with. */
interface ChatObjectHead {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
}

/** A whole chat completion (`object: "chat.completion"`). */
export interface ChatCompletion extends ChatObjectHead {
  choices?: {
    index?: number;
    message?: {
      role?: string;
      content?: string | null;
      reasoning?: string | null;
      reasoning_content?: string | null;
      refusal?: string | null;
      tool_calls?: Partial<ChatToolCall>[];
    };
    finish_reason?: string | null;
  }[];
  usage?: ChatUsage | null;
  [field: string]: unknown;
}

/** A piece of a tool call in a streamed delta: its id and name come first, its arguments in pieces. */
export interface ChatToolCallDelta {
  index?: number;
  id?: string;
  type?: "function";
  function?: { name?: string; arguments?: string };
}

/** One event of a completion stream (`object: "chat.completion.chunk"`); `choices: []` with `usage` is the final one. */
export interface ChatChunk extends ChatObjectHead {
  choices?: {
    index?: number;
    delta?: {
      role?: string;
      content?: string | null;
      reasoning?: string | null;
      reasoning_content?: string | null;
      refusal?: string | null;
      tool_calls?: ChatToolCallDelta[];
    };
    finish_reason?: string | null;
  }[];
  usage?: ChatUsage | null;
  /** A stream's error event: OpenAI's error object. */
  error?: { message?: string; type?: string; code?: string | null; param?: string | null };
  [field: string]: unknown;
}

/** The data of the event that ends a complete canonical stream. */
export const STREAM_END = "[DONE]";

/**
 * The canonical stream's error event (an OpenAI error object, as chat streams carry one): what billing ends a stream
 * with when its payment fails; each dialect's stream encoder renders it as its API's error event.
 */
export function chatErrorEvent(code: "settlement_failed" | "payment_expired", message: string): SseEvent {
  return SseEvent.of({ error: errorObject(code, message) });
}

/** The usage object of the final usage-only chunk (`choices: []` or none, and a usage object), or undefined. */
export function usageOnlyChunkUsage(chunk: unknown): ChatUsage | undefined {
  if (typeof chunk !== "object" || chunk === null) return undefined;
  const { choices, usage } = chunk as ChatChunk;
  const usageOnly = choices === undefined || (Array.isArray(choices) && choices.length === 0);
  return usageOnly && typeof usage === "object" && usage !== null && !Array.isArray(usage) ? usage : undefined;
}
