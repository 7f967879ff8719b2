import { chatLimits } from "../../config/limits";
import { resourceUrl, type AppContext } from "../app-context";
import { ApiError } from "../errors";
import { readJsonBody } from "../http/read-json-body";
import { runPaidRequest } from "../payment/paid-request";
import { countChatInputTokens } from "../pricing/count-tokens";
import { quoteTokens } from "../pricing/quote-tokens";
import { parseChatRequest } from "./chat-request";

/** Endpoints 1 and 2: a chat completion, paid per request with x402, streamed when asked. */
export async function createChatCompletion(context: AppContext, request: Request): Promise<Response> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const parsed = parseChatRequest(body.value);
  const inputTokens = countChatInputTokens(parsed.body.messages, parsed.body.tools);
  if (inputTokens > chatLimits.maxInputTokens) {
    throw new ApiError(
      "context_length_exceeded",
      `The messages count ${inputTokens} input tokens; the limit is ${chatLimits.maxInputTokens}`,
      { param: "messages" },
    );
  }
  const quote = quoteTokens({
    model: parsed.model,
    inputTokens,
    maxOutputTokens: parsed.maxOutputTokens,
    network: context.config.network,
  });
  // The upstream must never produce more than was paid for, so the priced output cap is always sent.
  const upstreamBody =
    parsed.body.max_completion_tokens !== undefined
      ? parsed.body
      : { ...parsed.body, max_tokens: parsed.maxOutputTokens };

  return runPaidRequest(context, {
    request,
    resourceUrl: resourceUrl(context, request),
    description: `Chat completion with ${parsed.model.id}`,
    amount: quote.amount,
    quote: quote.display,
    bodySha256: body.sha256,
    quoteMs: performance.now() - started,
    work: async () =>
      parsed.body.stream === true
        ? { kind: "stream", stream: await context.upstream.startStream("/chat/completions", upstreamBody) }
        : { kind: "json", body: await context.upstream.postJson("/chat/completions", upstreamBody) },
  });
}
