import type { ModelCatalog } from "../../config/catalog/model-catalog";
import { freeEndpoint } from "../context/endpoint";
import { jsonAnswer } from "../http/api-answer";
import { readJsonBody } from "../http/read-json-body";
import { countMessagesTokens } from "./messages-count-tokens";
import { messagesErrorAnswer } from "./messages-error";
import { parseCountTokensRequest, messagesRequestSchema } from "./messages-request";

/**
 * `POST /v1/messages/count_tokens`, free: the input tokens of a Messages request as its quote counts them, with the
 * same body cap as `/v1/messages`; errors in Anthropic's form.
 */
export const messagesCountTokensEndpoint = (catalog: ModelCatalog) =>
  freeEndpoint({
    method: "POST",
    paths: ["/v1/messages/count_tokens", "/api/v1/messages/count_tokens"],
    access: ["free"],
    // The Messages body, max_tokens optional: counting does not need it.
    schema: messagesRequestSchema.partial({ max_tokens: true }),
    uses: [],
    async handle(_context, request) {
      try {
        const body = await readJsonBody(request);
        return jsonAnswer(await countMessagesTokens(parseCountTokensRequest(body.value, catalog)));
      } catch (error) {
        return messagesErrorAnswer(error);
      }
    },
    docs: {
      operationId: "countMessageTokens",
      summary: "Count a Messages request's input tokens, as its price counts them (free)",
      example: { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "Hello" }] },
      responseDescription: "{input_tokens}",
    },
  });
