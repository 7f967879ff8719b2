import { chatLimits } from "../../config/limits";
import type { GptModel } from "../../config/models";
import { resourceUrl, type AppContext } from "../app-context";
import { ApiError } from "../errors";
import type { JsonBody } from "../http/read-json-body";
import { runPaidRequest, type PreparedAnswer } from "../payment/paid-request";
import { prepaidCodeFor } from "../prepaid/prepaid-code";
import { runPrepaidCompletion, type OutputTokenReader } from "../prepaid/run-prepaid-completion";
import { countChatInputTokens, type CountableMessage } from "../pricing/count-tokens";
import { quoteTokens } from "../pricing/quote-tokens";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

export type Billing = "x402" | "prepaid";

/**
 * The part chat completions and responses share: count the input as the upstream will see it, enforce the
 * input limit, then bill the call to a prepaid key (bearer) or run the x402 flow (quote, pay, work, settle).
 */
export function runPaidCompletion(
  context: AppContext,
  request: ApiRequest,
  options: {
    body: JsonBody;
    started: number;
    model: GptModel;
    messages: readonly CountableMessage[];
    tools: unknown;
    maxOutputTokens: number;
    description: string;
    /** The upstream call with this output cap; prepaid calls need the usage reported, even when streamed. */
    work: (maxOutputTokens: number, billing: Billing) => Promise<PreparedAnswer>;
    outputTokens: OutputTokenReader;
  },
): Promise<ApiAnswer> {
  const inputTokens = countChatInputTokens(options.messages, options.tools);
  if (inputTokens > chatLimits.maxInputTokens) {
    throw new ApiError(
      "context_length_exceeded",
      `The input counts ${inputTokens} tokens; the limit is ${chatLimits.maxInputTokens}`,
      { param: "messages" },
    );
  }
  const prepaidCode = prepaidCodeFor(request);
  if (prepaidCode) {
    return runPrepaidCompletion(context, prepaidCode, {
      model: options.model,
      inputTokens,
      maxOutputTokens: options.maxOutputTokens,
      work: (maxOutputTokens) => options.work(maxOutputTokens, "prepaid"),
      outputTokens: options.outputTokens,
    });
  }
  const quote = quoteTokens({
    model: options.model,
    inputTokens,
    maxOutputTokens: options.maxOutputTokens,
    network: context.config.network,
  });
  return runPaidRequest(context, {
    request,
    resourceUrl: resourceUrl(context, request),
    description: options.description,
    amount: quote.amount,
    quote: quote.display,
    bodySha256: options.body.sha256,
    quoteMs: performance.now() - options.started,
    work: () => options.work(options.maxOutputTokens, "x402"),
  });
}
