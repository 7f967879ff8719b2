import { errorAnswer } from "../http/api-answer";
import type { Dialect } from "../dialects/dialect";
import { tokenPricing } from "../context/pricing-text";
import { BEARER } from "../auth/key-principal";
import { encodeResponse, encodeResponsesStream } from "./native-encode";
import { parseResponsesRequest, responsesRequestSchema, type ResponsesCall } from "./responses-request";

export type { ResponsesCall };
import { responsesNative } from "./responses-native";
import { customToolNames, toChatRequest } from "./to-chat-request";

/**
 * OpenAI's Responses API (endpoints 3 and 4, alpha), translated to and from the canonical chat call: a Response
 * object, or the Responses event sequence; errors as OpenAI's error object. Routes that speak Responses natively
 * are sent the request as it came (responses-native.ts), their answers passed on with the cost stated.
 */
export const responsesDialect: Dialect<ResponsesCall> = {
  name: "Response (alpha)",
  paths: ["/v1/responses", "/api/v1/responses"],
  schema: responsesRequestSchema,
  parse(value, catalog) {
    const parsed = parseResponsesRequest(value, catalog);
    return {
      ...parsed,
      chatRequest: toChatRequest(parsed),
      stream: parsed.body.stream === true,
      customTools: customToolNames(parsed.body),
    };
  },
  encodeAnswer: (parsed, completion) => encodeResponse(parsed, completion),
  encodeStream: (parsed, canonical) => encodeResponsesStream(canonical, parsed),
  errorAnswer: (error) => errorAnswer(error),
  keyCarriers: BEARER,
  native: responsesNative,
  docs: (catalog) => ({
    operationId: "createResponse",
    summary: "Responses API, alpha (paid per request; prepaid key accepted)",
    example: { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 256 },
    responseDescription: "response object, or a text/event-stream of Responses events ending with data: [DONE]",
    pricing: tokenPricing(catalog, "max_output_tokens"),
    streaming: true,
  }),
};
