import { chatLimits } from "../../config/limits";
import type { ChatModel } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import type { Quote } from "../billing/payment-method";
import { ApiError } from "../errors";
import { countChatRequestInputTokens, type CountableChatRequest } from "./count-tokens";
import { TokenCounter } from "./linear-token-count";
import { quoteTokens } from "./quote-tokens";

/**
 * A chat completion or response: the input counted as the upstream will see it (the chat request sent upstream:
 * messages, tools, and any other field that may carry text, see countChatRequestInputTokens), refused over the
 * input limit (the service's, or the model's context where the catalog gives it less), then priced at the model's
 * rates with the output cap. The same quote bills a prepaid key in tokens.
 */
export function quoteCompletion(options: {
  model: ChatModel;
  /** The chat request as the upstream is sent it. */
  request: CountableChatRequest;
  maxOutputTokens: number;
  network: NetworkDefinition;
  description: string;
}): Quote {
  const { model, maxOutputTokens, network } = options;
  const limit = Math.min(chatLimits.maxInputTokens, model.contextTokens);
  // Counting stops soon past the limit: a body far over it costs no more than one at it.
  const counter = new TokenCounter(limit);
  const inputTokens = countChatRequestInputTokens(options.request, counter);
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
