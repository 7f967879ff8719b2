import { chatCompletionAnswer } from "../chat/chat-answer";
import { chatRequestSchema, parseChatRequest, withOutputCap } from "../chat/chat-request";
import { completionTokens } from "../chat/chat-usage";
import { chatStreamMeter } from "../billing/chat-stream-meter";
import { quoteCompletion } from "../pricing/quote-completion";
import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { paidEndpoint } from "./endpoint";
import { tokenPricing } from "./pricing-text";

/** Endpoints 1 and 2: a chat completion, paid with x402 or billed to a prepaid key, streamed when asked. */
export const chatCompletions = (catalog: ModelCatalog) =>
  paidEndpoint({
    method: "POST",
    paths: ["/v1/chat/completions", "/api/v1/chat/completions"],
    access: ["x402", "prepaid"],
    channels: true,
    overlapsVerify: true,
    schema: chatRequestSchema,
    parse: (value) => parseChatRequest(value, catalog),
    quote: (parsed, network) =>
      quoteCompletion({
        model: parsed.model,
        request: parsed.body,
        maxOutputTokens: parsed.maxOutputTokens,
        network,
        description: `Chat completion with ${parsed.model.id}`,
      }),
    async work(context, parsed, grant) {
      const upstreamBody = withOutputCap(parsed.body, grant.outputCap);
      const routes = context.providers.of(parsed.model);
      if (parsed.body.stream !== true) {
        const served = await routes.postJson("/chat/completions", upstreamBody, chatCompletionAnswer, grant.signal);
        return { kind: "json", body: served.value, provider: served.provider };
      }
      // A call billed on its usage needs the usage reported, so it is always asked for (and hidden if not wanted).
      if (grant.usageRequired) upstreamBody.stream_options = { ...parsed.body.stream_options, include_usage: true };
      const served = await routes.startStream("/chat/completions", upstreamBody, grant.signal);
      return { kind: "stream", stream: served.value, provider: served.provider };
    },
    usage: {
      fromJson: completionTokens,
      streamMeter: (parsed, allowedOutput) =>
        chatStreamMeter({ allowedOutput, hideUsageOnlyChunks: parsed.body.stream_options?.include_usage !== true }),
    },
    docs: {
      operationId: "createChatCompletion",
      summary: "Chat completion (paid per request; prepaid key accepted)",
      example: { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "Hello" }], max_tokens: 256 },
      responseDescription:
        "chat.completion, or a text/event-stream of chat.completion.chunk events ending with data: [DONE]",
      pricing: tokenPricing(catalog, "max_tokens"),
      streaming: true,
    },
  });
