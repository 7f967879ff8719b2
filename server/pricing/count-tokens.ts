import { TokenCounter } from "./linear-token-count";

/**
 * o200k_base token count of `text`, in time linear in its length (see TokenCounter: a run of hundreds of characters
 * of one kind counts in pieces); never throws.
 */
export function countTextTokens(text: string): number {
  return new TokenCounter().count(text);
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
  /** The legacy form of tool_calls. */
  function_call?: unknown;
}

/** A message's fields counted as their text is; any other one is counted as its JSON (see otherFieldsTokens). */
const MESSAGE_FIELDS = new Set(["role", "content", "name", "tool_calls", "tool_call_id"]);

/**
 * Top-level chat fields the model does not read as input text: settings (caps, sampling, streaming, tool choice),
 * stop sequences, token biases, and the caller's own labels (`user`, `metadata`, `safety_identifier`,
 * `prompt_cache_key`), which the provider keeps beside the call without billing them. `messages` and `tools` are
 * counted on their own. Any other field the paid chat forwards (`functions`, `response_format`; chat/priced-fields.ts)
 * is passed on to the provider, which may bill it as input, so it is counted as its JSON.
 */
const UNCOUNTED_REQUEST_FIELDS = new Set([
  "model",
  "messages",
  "tools",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "n",
  "stream",
  "stream_options",
  "stop",
  "seed",
  "user",
  "presence_penalty",
  "frequency_penalty",
  "logit_bias",
  "logprobs",
  "top_logprobs",
  "parallel_tool_calls",
  "tool_choice",
  "store",
  "metadata",
  "service_tier",
  "reasoning_effort",
  "verbosity",
  "modalities",
  "safety_identifier",
  "prompt_cache_key",
]);

/** Adds the JSON of an object's fields outside `known` to `texts`; null (an SDK's "not given") counts nothing. */
function otherFieldsTexts(object: object, known: ReadonlySet<string>, texts: string[]): void {
  for (const field in object) {
    const value = (object as Record<string, unknown>)[field];
    if (known.has(field) || value === null || value === undefined) continue;
    texts.push(JSON.stringify(value));
  }
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
 * What a request's input count is made of: tokens of framing (per message, per name, the reply's primer) and the
 * texts counted as they are, in order. Counting is then one loop over the texts, which a long body runs yielding.
 */
export interface InputTexts {
  framing: number;
  texts: string[];
}

/**
 * The texts of chat messages and tool definitions: the messages as sent (role, content, name, tool calls, and the
 * JSON of any other field, such as a legacy `function_call`) plus the tool definitions, which the model reads too.
 */
function chatInputTexts(messages: readonly CountableMessage[], tools: unknown, into: InputTexts): InputTexts {
  const { texts } = into;
  into.framing += REPLY_PRIMER_TOKENS;
  for (const message of messages) {
    into.framing += TOKENS_PER_MESSAGE;
    texts.push(message.role, contentText(message.content));
    if (typeof message.name === "string") {
      into.framing += TOKENS_PER_NAME;
      texts.push(message.name);
    }
    if (message.tool_calls !== undefined) texts.push(JSON.stringify(message.tool_calls));
    if (typeof message.tool_call_id === "string") texts.push(message.tool_call_id);
    otherFieldsTexts(message, MESSAGE_FIELDS, texts);
  }
  if (tools !== undefined) texts.push(JSON.stringify(tools));
  return into;
}

/** Counts what `inputTexts` gives, with one counter, so its bound on the work of long runs is the request's. */
function countInput({ framing, texts }: InputTexts, counter: TokenCounter): number {
  let total = framing;
  for (const text of texts) total += counter.count(text);
  return total;
}

/** Input tokens of chat messages and tool definitions (see chatInputTexts). */
export function countChatInputTokens(
  messages: readonly CountableMessage[],
  tools?: unknown,
  counter = new TokenCounter(),
): number {
  return countInput(chatInputTexts(messages, tools, { framing: 0, texts: [] }), counter);
}

/** A chat request as sent upstream: its messages, its tools, and any other field. */
export interface CountableChatRequest {
  readonly messages: readonly CountableMessage[];
  readonly tools?: unknown;
  readonly [field: string]: unknown;
}

/**
 * The input of a whole chat request: its messages and tools (chatInputTexts), and the JSON of every other top-level
 * field that may carry text the provider bills as input (see UNCOUNTED_REQUEST_FIELDS).
 */
export function chatRequestInputTexts(request: CountableChatRequest): InputTexts {
  const input = chatInputTexts(request.messages, request.tools, { framing: 0, texts: [] });
  otherFieldsTexts(request, UNCOUNTED_REQUEST_FIELDS, input.texts);
  return input;
}

/**
 * Input tokens of a whole chat request (chatRequestInputTexts). A request of messages, tools and settings alone
 * counts exactly what countChatInputTokens does.
 */
export function countChatRequestInputTokens(request: CountableChatRequest, counter = new TokenCounter()): number {
  return countInput(chatRequestInputTexts(request), counter);
}
