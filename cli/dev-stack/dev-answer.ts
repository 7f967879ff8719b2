import { countChatInputTokens, countTextTokens, type CountableMessage } from "../../server/pricing/count-tokens";
import { devCompletion } from "./dev-completion";
import type { UpstreamFault } from "./dev-faults";
import { devToolCall, type DevToolCall } from "./dev-tool-call";

const HIDDEN_REASONING_TOKENS = 100;

/** What the development provider answers a chat, whatever API it is asked in: text or a tool call, and the usage. */
export interface DevAnswer {
  text: string;
  toolCall: DevToolCall | undefined;
  finishReason: "stop" | "length" | "tool_calls";
  promptTokens: number;
  /** Output tokens, hidden reasoning included. */
  completionTokens: number;
  /** Hidden reasoning tokens (the hidden-reasoning fault): reported in the usage, never streamed. */
  reasoningTokens: number;
}

/**
 * The answer to chat messages (and tools): a tool call when the tools and the last message ask for one
 * (dev-tool-call.ts), else the deterministic text of dev-completion.ts, cut at `maxTokens`; the prompt is counted as
 * the gateway's quote counts it.
 */
export function devAnswer(call: {
  model: string;
  messages: readonly CountableMessage[];
  tools: unknown;
  toolChoice: unknown;
  maxTokens: number;
  fault: UpstreamFault;
}): DevAnswer {
  const toolCall = devToolCall(call.messages, call.tools, call.toolChoice);
  const completion = toolCall
    ? {
        text: "",
        completionTokens: countTextTokens(toolCall.name) + countTextTokens(toolCall.arguments),
        finishReason: "tool_calls" as const,
      }
    : devCompletion(call.model, call.messages, call.maxTokens);
  const reasoningTokens =
    call.fault === "hidden-reasoning"
      ? Math.max(0, Math.min(HIDDEN_REASONING_TOKENS, call.maxTokens - completion.completionTokens))
      : 0;
  return {
    text: completion.text,
    toolCall,
    finishReason: completion.finishReason,
    promptTokens: countChatInputTokens(call.messages, call.tools),
    completionTokens: completion.completionTokens + reasoningTokens,
    reasoningTokens,
  };
}
