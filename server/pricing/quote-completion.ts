import { chatLimits } from "../../config/limits";
import type { ChatModel } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import type { Quote } from "./quote";
import { ApiError } from "../core/errors";
import { chatRequestInputTexts, type CountableChatRequest } from "./count-tokens";
import { TokenCounter } from "./linear-token-count";
import { chatImageTokens } from "../vision/image-parts";
import { quoteTokens } from "./quote-tokens";

/**
 * Texts of this many characters in all (a few milliseconds of counting) are counted at once; a longer input is
 * counted yielding to other work every few milliseconds (TokenCounter.countYielding), so that one large body holds
 * no other request up. The common quote stays synchronous: its 402 pays for no promise.
 */
export const YIELDING_INPUT_CHARS = 32_768;

/**
 * A chat completion or response: the input counted as the upstream will see it (countQuotedInput), then priced at
 * the model's rates with the output cap. The same quote bills a prepaid key in tokens. A promise when the input is
 * long.
 */
export function quoteCompletion(options: {
  model: ChatModel;
  /** The chat request as the upstream is sent it. */
  request: CountableChatRequest;
  /** Texts a native route is sent beside it (DialectCall.countedBeside). */
  beside?: readonly string[];
  maxOutputTokens: number;
  network: NetworkDefinition;
  description: string;
}): Quote | Promise<Quote> {
  const input = countQuotedInput(options.model, options.request, options.beside);
  return input instanceof Promise ? input.then((tokens) => priced(options, tokens)) : priced(options, input);
}

/**
 * The input tokens of a chat request as its quote counts them (the chat request sent upstream: messages, tools, and
 * any other field that may carry text, see chatRequestInputTexts; its images as the model's provider counts them,
 * vision/image-parts.ts), refused over the input limit (the service's, or
 * the model's context where the catalog gives it less): the one count every route that counts uses, paid or free.
 * Counting stops soon past the limit, so a body far over it costs no more than one at it; a long input is counted
 * yielding (a promise).
 */
export function countQuotedInput(
  model: ChatModel,
  request: CountableChatRequest,
  beside: readonly string[] = [],
): number | Promise<number> {
  const limit = Math.min(chatLimits.maxInputTokens, model.contextTokens);
  // Images first: one that is refused is named before any text is counted.
  const images = chatImageTokens(model, request.messages, limit);
  const { framing, texts } = chatRequestInputTexts(request);
  texts.push(...beside);
  // The texts' counter stops past the limit itself (the framing's few tokens aside): one token over is still counted
  // exactly, and named so.
  const counted = countTexts(texts, limit);
  const checked = ({ tokens, stopped }: CountedTexts) =>
    withinLimit(model, framing + images + tokens, stopped || images > limit, limit);
  return counted instanceof Promise ? counted.then(checked) : checked(counted);
}

/** What countTexts found: the tokens, and whether it stopped past its limit (the tokens are then a lower bound). */
export interface CountedTexts {
  tokens: number;
  stopped: boolean;
}

/**
 * The tokens of `texts` as every quote counts them (TokenCounter: linear time), stopping soon past `limit`: at
 * once when they are short, else yielding to other work every few milliseconds (a promise).
 */
export function countTexts(texts: readonly string[], limit: number): CountedTexts | Promise<CountedTexts> {
  const counter = new TokenCounter(limit);
  let chars = 0;
  for (const text of texts) chars += text.length;
  if (chars > YIELDING_INPUT_CHARS) {
    return counter.countYielding(texts).then((tokens) => ({ tokens, stopped: counter.stopped }));
  }
  let tokens = 0;
  for (const text of texts) tokens += counter.count(text);
  return { tokens, stopped: counter.stopped };
}

function withinLimit(model: ChatModel, inputTokens: number, stopped: boolean, limit: number): number {
  if (inputTokens <= limit) return inputTokens;
  throw new ApiError(
    "context_length_exceeded",
    `The input counts ${stopped ? "more than " : ""}${stopped ? limit : inputTokens} tokens; the limit is ${limit}${limit < chatLimits.maxInputTokens ? `, ${model.id}'s context` : ""}`,
    { param: "messages" },
  );
}

function priced(options: Parameters<typeof quoteCompletion>[0], inputTokens: number): Quote {
  const { model, maxOutputTokens, network } = options;
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
