import { countQuotedInput } from "../pricing/quote-completion";
import type { ParsedMessagesRequest } from "./messages-request";
import { thinkingTexts, toChatRequest } from "./to-chat-request";

/**
 * The answer of `POST /v1/messages/count_tokens`: the input tokens of the request as the quote counts them, that is
 * of the canonical chat request it is translated to (pricing/quote-completion.ts: the messages, the tools and the
 * framing, with the quote's input limit), so the count a caller is told is the count it is charged for, and the work
 * it costs is a quote's. A promise when the input is long.
 */
export async function countMessagesTokens(parsed: ParsedMessagesRequest): Promise<{ input_tokens: number }> {
  return { input_tokens: await countQuotedInput(parsed.model, toChatRequest(parsed), thinkingTexts(parsed.body)) };
}
