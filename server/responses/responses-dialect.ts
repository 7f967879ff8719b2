import type { ChatModel } from "../../config/catalog/model-catalog";
import type { ChatRequestBody } from "../chat/chat-wire";
import type { Dialect } from "../dialects/dialect";
import { tokenPricing } from "../endpoints/pricing-text";
import { prepaidCodeFor } from "../prepaid/prepaid-code";
import { fromChatCompletion } from "./response-object";
import { parseResponsesRequest, responsesRequestSchema, type ResponsesRequest } from "./responses-request";
import { translateToResponsesStream } from "./responses-stream";
import { toChatRequest } from "./to-chat-request";

/** A Responses request, parsed, with the canonical chat call it is translated to. */
export interface ResponsesCall {
  body: ResponsesRequest;
  model: ChatModel;
  chatRequest: ChatRequestBody;
  maxOutputTokens: number;
  stream: boolean;
}

/**
 * OpenAI's Responses API (endpoints 3 and 4, alpha), translated to and from the canonical chat call: a Response
 * object, or the Responses event sequence; errors as OpenAI's error object.
 */
export const responsesDialect: Dialect<ResponsesCall> = {
  name: "Response (alpha)",
  paths: ["/v1/responses", "/api/v1/responses"],
  schema: responsesRequestSchema,
  parse(value, catalog) {
    const parsed = parseResponsesRequest(value, catalog);
    return { ...parsed, chatRequest: toChatRequest(parsed), stream: parsed.body.stream === true };
  },
  encodeAnswer: (parsed, completion) => fromChatCompletion(parsed, completion),
  encodeStream: (parsed, canonical) => translateToResponsesStream(canonical, parsed),
  errorAnswer: (error) => error.toAnswer(),
  prepaidKey: prepaidCodeFor,
  docs: (catalog) => ({
    operationId: "createResponse",
    summary: "Responses API, alpha (paid per request; prepaid key accepted)",
    example: { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 256 },
    responseDescription: "response object, or a text/event-stream of Responses events ending with data: [DONE]",
    pricing: tokenPricing(catalog, "max_output_tokens"),
    streaming: true,
  }),
};
