import { countChatInputTokens, countTextTokens, type CountableMessage } from "../../server/pricing/count-tokens";
import type { ChatModel } from "../../config/catalog/model-catalog";
import { VISION_DEFAULTS, type VisionPricing } from "../../config/catalog/vision";
import { chatImageTokens } from "../../server/vision/image-parts";
import { devCompletion } from "./dev-completion";
import type { UpstreamFault } from "./dev-faults";
import { devToolCall, type DevToolCall } from "./dev-tool-call";

const HIDDEN_REASONING_TOKENS = 100;
/** What the more-input fault adds to the prompt's count. */
export const MORE_INPUT_TOKENS = 1000;

/** How each API's provider counts images: OpenAI's tiles for chat and Responses, Anthropic's pixels for Messages. */
export const DEV_VISION = {
  openai: { formula: "tiles", ...VISION_DEFAULTS.tiles },
  anthropic: { formula: "pixels", ...VISION_DEFAULTS.pixels },
} as const satisfies Record<string, VisionPricing>;

/**
 * The prompt's tokens as the development provider reports them: counted as the gateway's quote counts chat input,
 * its images by the provider's own formula (an image it cannot read counts nothing), and 1000 more under the
 * more-input fault.
 */
export function devPromptTokens(
  messages: readonly CountableMessage[],
  tools: unknown,
  vision: VisionPricing,
  fault: UpstreamFault,
): number {
  let images = 0;
  try {
    images = chatImageTokens({ id: "development", vision } as ChatModel, messages);
  } catch {
    images = 0;
  }
  return countChatInputTokens(messages, tools) + images + (fault === "more-input" ? MORE_INPUT_TOKENS : 0);
}

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
 * the gateway's quote counts it (devPromptTokens).
 */
export function devAnswer(call: {
  model: string;
  messages: readonly CountableMessage[];
  tools: unknown;
  toolChoice: unknown;
  maxTokens: number;
  fault: UpstreamFault;
  /** How its provider counts images (DEV_VISION). */
  vision: VisionPricing;
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
    promptTokens: devPromptTokens(call.messages, call.tools, call.vision, call.fault),
    completionTokens: completion.completionTokens + reasoningTokens,
    reasoningTokens,
  };
}
