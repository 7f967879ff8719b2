import { parseEventJson } from "../http/sse-data-parser";

/** The output tokens a chat completion reports (`usage.completion_tokens`), whole or in a stream chunk. */
export function completionTokens(value: unknown): number | undefined {
  const tokens = (value as { usage?: { completion_tokens?: unknown } } | null)?.usage?.completion_tokens;
  return typeof tokens === "number" ? tokens : undefined;
}

// Every delta of a stream passes the two checks below, and nearly none is what they look for: an event is parsed
// for them only when its text holds what is sought, which any JSON holding it must (`"choices":[]` with any
// spacing). (A prepaid stream's deltas are parsed once more, for their text: streamedOutputText.)
const REPORTS_COMPLETION_TOKENS = /"completion_tokens"/;
const HAS_EMPTY_CHOICES = /"choices"\s*:\s*\[\s*\]/;

/** The output tokens a stream event's data reports, if any. */
export function streamedCompletionTokens(data: string): number | undefined {
  return REPORTS_COMPLETION_TOKENS.test(data) ? completionTokens(parseEventJson(data)) : undefined;
}

/** A chunk that carries only usage (`choices: []`), as sent when `stream_options.include_usage` is true. */
export function isUsageOnlyChunk(data: string): boolean {
  if (!HAS_EMPTY_CHOICES.test(data)) return false;
  const chunk = parseEventJson(data) as { choices?: unknown[]; usage?: unknown } | undefined;
  return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && chunk.usage !== undefined;
}

interface ChatDelta {
  content?: unknown;
  reasoning?: unknown;
  reasoning_content?: unknown;
  refusal?: unknown;
  tool_calls?: unknown;
}

/**
 * The output text a stream chunk carries (content, reasoning, refusal, tool calls' names and arguments): what is
 * counted when a stream ends without reporting its usage.
 */
export function streamedOutputText(data: string): string {
  if (!data.includes('"delta"')) return "";
  const chunk = parseEventJson(data) as { choices?: unknown } | undefined;
  if (!Array.isArray(chunk?.choices)) return "";
  let text = "";
  for (const choice of chunk.choices as { delta?: ChatDelta }[]) {
    const delta = choice?.delta;
    if (!delta || typeof delta !== "object") continue;
    // Providers name reasoning one way or the other; one that sends both sends the same text twice.
    for (const part of [delta.content, delta.reasoning ?? delta.reasoning_content, delta.refusal]) {
      if (typeof part === "string") text += part;
    }
    if (!Array.isArray(delta.tool_calls)) continue;
    for (const call of delta.tool_calls as { function?: { name?: unknown; arguments?: unknown } }[]) {
      if (typeof call?.function?.name === "string") text += call.function.name;
      if (typeof call?.function?.arguments === "string") text += call.function.arguments;
    }
  }
  return text;
}
