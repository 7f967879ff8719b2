import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

// Text that looks like a special token (`<|endoftext|>`) is ordinary text from a caller: count it as such.
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/** o200k_base token count of `text`; never throws. */
export function countTextTokens(text: string): number {
  return text.length === 0 ? 0 : countTokens(text, PLAIN_TEXT);
}

/** The framing OpenAI documents for chat input: each message costs 3 tokens beyond its text, the reply 3. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_NAME = 1;
const REPLY_PRIMER_TOKENS = 3;

export interface CountableMessage {
  role: string;
  content?: unknown;
  name?: unknown;
  tool_calls?: unknown;
  tool_call_id?: unknown;
}

/** The text of a message's content: a string, or the text parts of a content array. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown) =>
        part && typeof part === "object" && "text" in part && typeof part.text === "string" ? part.text : "",
      )
      .join("");
  }
  return "";
}

/**
 * Input tokens of a chat request, counted over the messages as sent (role, content, name, tool calls) plus
 * the tool definitions, which the model reads too.
 */
export function countChatInputTokens(messages: readonly CountableMessage[], tools?: unknown): number {
  let total = REPLY_PRIMER_TOKENS;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTextTokens(message.role) + countTextTokens(contentText(message.content));
    if (typeof message.name === "string") total += TOKENS_PER_NAME + countTextTokens(message.name);
    if (message.tool_calls !== undefined) total += countTextTokens(JSON.stringify(message.tool_calls));
    if (typeof message.tool_call_id === "string") total += countTextTokens(message.tool_call_id);
  }
  if (tools !== undefined) total += countTextTokens(JSON.stringify(tools));
  return total;
}
