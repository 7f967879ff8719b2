import { randomBytes } from "node:crypto";
import { costFieldsOf as costFields, type ChatCompletion, type ChatUsage } from "../chat/chat-wire";

/** Anthropic's stop reasons this translation gives. */
export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export type MessageContentBlock =
  { type: "text"; text: string } | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> };

/** Anthropic's usage, and the cost fields of the canonical usage beside the counts. */
export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number | null;
  cache_read_input_tokens: number | null;
  [costField: string]: unknown;
}

/**
 * Whether an event is a comment alone (a provider's keep-alive): no data, and no JSON either (an event made here
 * with SseEvent.of has JSON but no data text until it is written).
 */
export function isComment(event: { data: string | undefined; json(): unknown }): boolean {
  return event.data === undefined && event.json() === undefined;
}

/** Ids shaped like Anthropic's: a prefix and 24 base62-looking characters. */
export function newMessagesId(prefix: "msg" | "toolu"): string {
  return `${prefix}_01${randomBytes(18).toString("base64url").replace(/[-_]/g, "x")}`;
}

/**
 * A chat finish reason as a stop reason: length is max_tokens, tool_calls is tool_use, content_filter is refusal,
 * and stop (or anything else) end_turn: chat does not say whether a stop sequence ended the answer, nor which.
 */
export function stopReason(finishReason: unknown): StopReason {
  switch (finishReason) {
    case "length":
      return "max_tokens";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "content_filter":
      return "refusal";
    default:
      return "end_turn";
  }
}

/** Canonical usage as Anthropic's: prompt and completion tokens, and the cost fields billing appended. */
export function messagesUsage(usage: ChatUsage | null | undefined, knownInput = 0): MessagesUsage {
  return {
    input_tokens: typeof usage?.prompt_tokens === "number" ? usage.prompt_tokens : knownInput,
    output_tokens: typeof usage?.completion_tokens === "number" ? usage.completion_tokens : 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
    ...costFields(usage),
  };
}

/** A tool call's arguments as a tool_use input: the object they encode, `{}` when they are not one. */
export function toolInput(args: string | undefined): Record<string, unknown> {
  if (!args) return {};
  try {
    const value: unknown = JSON.parse(args);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : {};
  } catch {
    return {};
  }
}

/**
 * A whole canonical chat completion as an Anthropic `message`: its text, then its tool calls as tool_use blocks;
 * `model` is the model the caller asked for. Hidden reasoning (`reasoning_content`) is not shown: a thinking block
 * needs a signature only Anthropic can make.
 */
export function messageFromChatCompletion(completion: ChatCompletion, model: string): Record<string, unknown> {
  const message = completion.choices?.[0]?.message;
  const text = typeof message?.content === "string" ? message.content : "";
  const content: MessageContentBlock[] = [];
  if (text !== "") content.push({ type: "text", text });
  for (const call of message?.tool_calls ?? []) {
    content.push({
      type: "tool_use",
      id: call.id || newMessagesId("toolu"),
      name: call.function?.name ?? "",
      input: toolInput(call.function?.arguments),
    });
  }
  return {
    id: newMessagesId("msg"),
    type: "message",
    role: "assistant",
    model,
    content,
    stop_reason: stopReason(completion.choices?.[0]?.finish_reason),
    stop_sequence: null,
    usage: messagesUsage(completion.usage),
  };
}
