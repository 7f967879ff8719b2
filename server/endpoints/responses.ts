import { chatCompletionAnswer } from "../chat/chat-answer";
import { responseOutputTokens } from "../chat/chat-usage";
import { responsesStreamMeter } from "../billing/responses-stream-meter";
import { quoteCompletion } from "../pricing/quote-completion";
import { fromChatCompletion } from "../responses/response-object";
import { parseResponsesRequest, responsesRequestSchema } from "../responses/responses-request";
import { responsesStreamError, translateToResponsesStream } from "../responses/responses-stream";
import { toChatRequest } from "../responses/to-chat-request";
import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { paidEndpoint } from "./endpoint";
import { tokenPricing } from "./pricing-text";

/**
 * Endpoints 3 and 4 (alpha): a Response, paid with x402 or billed to a prepaid key, translated to and from a chat
 * completion.
 */
export const responses = (catalog: ModelCatalog) =>
  paidEndpoint({
    method: "POST",
    paths: ["/v1/responses", "/api/v1/responses"],
    access: ["x402", "prepaid"],
    channels: true,
    overlapsVerify: true,
    schema: responsesRequestSchema,
    parse(value) {
      const parsed = parseResponsesRequest(value, catalog);
      return { ...parsed, chatRequest: toChatRequest(parsed) };
    },
    quote: (parsed, network) =>
      quoteCompletion({
        model: parsed.model,
        request: parsed.chatRequest,
        maxOutputTokens: parsed.maxOutputTokens,
        network,
        description: `Response (alpha) with ${parsed.model.id}`,
      }),
    async work(context, parsed, grant) {
      const chatRequest = { ...parsed.chatRequest, max_tokens: grant.outputCap };
      const routes = context.providers.of(parsed.model);
      if (parsed.body.stream) {
        const started = await routes.startStream("/chat/completions", chatRequest, grant.signal);
        const body = translateToResponsesStream(started.value.body, parsed);
        const stream = { body, cancel: started.value.cancel };
        return { kind: "stream", stream, failWith: responsesStreamError, provider: started.provider };
      }
      const served = await routes.postJson("/chat/completions", chatRequest, chatCompletionAnswer, grant.signal);
      return { kind: "json", body: fromChatCompletion(parsed, served.value), provider: served.provider };
    },
    usage: {
      fromJson: responseOutputTokens,
      streamMeter: (_parsed, allowedOutput) => responsesStreamMeter({ allowedOutput }),
    },
    docs: {
      operationId: "createResponse",
      summary: "Responses API, alpha (paid per request; prepaid key accepted)",
      example: { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 256 },
      responseDescription: "response object, or a text/event-stream of Responses events ending with data: [DONE]",
      pricing: tokenPricing(catalog, "max_output_tokens"),
      streaming: true,
    },
  });
