import { countChatRequestInputTokens } from "../pricing/count-tokens";
import type { ParsedMessagesRequest } from "./messages-request";
import { toChatRequest } from "./to-chat-request";

/**
 * The answer of `POST /v1/messages/count_tokens`: the input tokens of the request as the quote counts them, that is
 * of the canonical chat request it is translated to (pricing/count-tokens.ts: the messages, the tools and the
 * framing), so the count a caller is told is the count it is charged for.
 */
export function countMessagesTokens(parsed: ParsedMessagesRequest): { input_tokens: number } {
  return { input_tokens: countChatRequestInputTokens(toChatRequest(parsed)) };
}
