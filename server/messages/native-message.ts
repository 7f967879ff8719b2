import { providerRefusal, UpstreamError } from "../upstream/upstream-error";
import { costFieldsOf as costFields, type ChatCompletion, type ChatToolCall, type ChatUsage } from "../chat/chat-wire";

/** The finish reasons a chat completion gives. */
export type ChatFinishReason = "stop" | "length" | "tool_calls" | "content_filter";

/**
 * A route that speaks Messages natively: its whole answer (an Anthropic `message`) read into the canonical chat
 * completion that billing meters, and written back as it came with the canonical usage's cost fields appended.
 */

/** An Anthropic stop reason as a chat finish reason. */
export function finishReasonOf(stopReason: unknown): ChatFinishReason {
  switch (stopReason) {
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

const count = (value: unknown) => (Number.isSafeInteger(value) && (value as number) >= 0 ? (value as number) : 0);

/**
 * Anthropic's usage as canonical usage: every input token billed (uncached, cache writes and cache reads) is a
 * prompt token; undefined when the answer reports no output count (billed as an unreported answer is).
 */
export function chatUsageOf(usage: unknown, knownInput?: number): ChatUsage | undefined {
  if (typeof usage !== "object" || usage === null) return undefined;
  const fields = usage as Record<string, unknown>;
  if (!Number.isSafeInteger(fields.output_tokens)) return undefined;
  const reported = ["input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"].some(
    (field) => typeof fields[field] === "number",
  );
  const prompt = reported
    ? count(fields.input_tokens) + count(fields.cache_creation_input_tokens) + count(fields.cache_read_input_tokens)
    : (knownInput ?? 0);
  const completion = count(fields.output_tokens);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

interface NativeBlock {
  type?: unknown;
  text?: unknown;
  thinking?: unknown;
  id?: unknown;
  name?: unknown;
  input?: unknown;
}

/** A native answer read as the canonical completion, and the way back to the native answer with its cost. */
export interface DecodedNativeMessage {
  canonical: ChatCompletion;
  /**
   * The native answer as it came, its usage with the cost fields of `billed`'s usage (the canonical, billed), and
   * naming `soldModel` (the id the caller bought) when given.
   */
  encode(billed: { usage?: ChatUsage | null }, soldModel?: string): Record<string, unknown>;
}

/**
 * Reads a native Messages answer: text blocks are the content, tool_use blocks the tool calls (their input as JSON
 * arguments), thinking the reasoning. A 200 whose body is an error, or no message at all, is a failed call (neither
 * settled nor charged).
 */
export function decodeNativeMessage(body: Record<string, unknown>): DecodedNativeMessage {
  if (body.type === "error" || (body.error !== undefined && body.error !== null)) {
    throw providerRefusal("upstream answered 200 with an error", JSON.stringify(body.error), "messages provider");
  }
  if (body.type !== "message" || !Array.isArray(body.content)) {
    throw new UpstreamError("protocol", "upstream answered /v1/messages without a message");
  }
  let text = "";
  let reasoning = "";
  const calls: ChatToolCall[] = [];
  for (const block of body.content as NativeBlock[]) {
    if (block.type === "text" && typeof block.text === "string") text += block.text;
    else if (block.type === "thinking" && typeof block.thinking === "string") reasoning += block.thinking;
    else if (block.type === "tool_use") {
      calls.push({
        id: String(block.id ?? ""),
        type: "function",
        function: { name: String(block.name ?? ""), arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  const usage = chatUsageOf(body.usage);
  const canonical: ChatCompletion = {
    id: typeof body.id === "string" ? body.id : undefined,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: typeof body.model === "string" ? body.model : undefined,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: calls.length > 0 && text === "" ? null : text,
          ...(calls.length > 0 ? { tool_calls: calls } : {}),
          ...(reasoning !== "" ? { reasoning_content: reasoning } : {}),
        },
        finish_reason: finishReasonOf(body.stop_reason),
      },
    ],
    ...(usage ? { usage } : {}),
  };
  return {
    canonical,
    encode(billed, soldModel) {
      const cost = costFields(billed.usage);
      const encoded = soldModel === undefined ? body : { ...body, model: soldModel };
      if (Object.keys(cost).length === 0 || typeof body.usage !== "object" || body.usage === null) return encoded;
      return { ...encoded, usage: { ...(body.usage as Record<string, unknown>), ...cost } };
    },
  };
}
