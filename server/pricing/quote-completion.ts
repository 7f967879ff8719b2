import { chatLimits } from "../../config/limits";
import type { ChatModel } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import type { Quote } from "../billing/payment-method";
import { ApiError } from "../errors";
import { chatRequestInputTexts, type CountableChatRequest } from "./count-tokens";
import { TokenCounter } from "./linear-token-count";
import { quoteTokens } from "./quote-tokens";

/**
 * Texts of this many characters in all (a few milliseconds of counting) are counted at once; a longer input is
 * counted yielding to other work every few milliseconds (TokenCounter.countYielding), so that one large body holds
 * no other request up. The common quote stays synchronous: its 402 pays for no promise.
 */
export const YIELDING_INPUT_CHARS = 32_768;

/**
 * A chat completion or response: the input counted as the upstream will see it (the chat request sent upstream:
 * messages, tools, and any other field that may carry text, see chatRequestInputTexts), refused over the
 * input limit (the service's, or the model's context where the catalog gives it less), then priced at the model's
 * rates with the output cap. The same quote bills a prepaid key in tokens. A promise when the input is long.
 */
export function quoteCompletion(options: {
  model: ChatModel;
  /** The chat request as the upstream is sent it. */
  request: CountableChatRequest;
  maxOutputTokens: number;
  network: NetworkDefinition;
  description: string;
}): Quote | Promise<Quote> {
  const { model } = options;
  const limit = Math.min(chatLimits.maxInputTokens, model.contextTokens);
  // Counting stops soon past the limit: a body far over it costs no more than one at it.
  const counter = new TokenCounter(limit);
  const { framing, texts } = chatRequestInputTexts(options.request);
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars > YIELDING_INPUT_CHARS) {
    return counter.countYielding(texts).then((counted) => priced(options, framing + counted, counter, limit));
  }
  let counted = framing;
  for (const text of texts) counted += counter.count(text);
  return priced(options, counted, counter, limit);
}

function priced(
  options: Parameters<typeof quoteCompletion>[0],
  inputTokens: number,
  counter: TokenCounter,
  limit: number,
): Quote {
  const { model, maxOutputTokens, network } = options;
  if (inputTokens > limit) {
    throw new ApiError(
      "context_length_exceeded",
      `The input counts ${counter.stopped ? "more than " : ""}${counter.stopped ? limit : inputTokens} tokens; the limit is ${limit}${limit < chatLimits.maxInputTokens ? `, ${model.id}'s context` : ""}`,
      { param: "messages" },
    );
  }
  const quote = quoteTokens({ model, inputTokens, maxOutputTokens, network });
  return {
    amount: quote.amount,
    get display() {
      return quote.display;
    },
    description: options.description,
    model: model.id,
    tokens: { model, input: inputTokens, maxOutput: maxOutputTokens, decimals: network.usdc.decimals },
  };
}

/**
 * The most a chat call to a model of `models` can be quoted (its input and output caps at their limits), before any
 * live settlement gas: what a caller's spend control must allow for every call to go through.
 */
export function highestChatQuote(models: readonly ChatModel[], network: NetworkDefinition): bigint {
  let highest = 0n;
  for (const model of models) {
    const inputTokens = Math.min(chatLimits.maxInputTokens, model.contextTokens);
    const maxOutputTokens = Math.min(chatLimits.maxOutputTokens, model.maxOutputTokens);
    const { amount } = quoteTokens({ model, inputTokens, maxOutputTokens, network });
    if (amount > highest) highest = amount;
  }
  return highest;
}
