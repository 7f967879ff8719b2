import { defaultCatalog } from "../../config/catalog/default-catalog";
import { devChatCompletion, type DevStreamOptions, type ReceivedChatRequest } from "./dev-chat";
import { devDecisions } from "./dev-decisions";
import { devEmbeddings } from "./dev-embeddings";
import { devFaults, type ProviderOutage } from "./dev-faults";
import { devMessages } from "./dev-messages";
import { devImageFile, devImageEdit, devImageGeneration } from "./dev-images";
import { devResponses, type ReceivedResponsesRequest } from "./dev-responses";
import { listen, sendJson, type JsonHttpServer } from "../lib/json-http-server";

export interface LocalUpstreamOptions extends DevStreamOptions {
  port: number;
  /** Honour `[paysvc-dev-fault:...]` in prompts (dev-faults.ts): the development stack and its tests turn it on. */
  faultDirectives?: boolean;
}

/** A running development provider, with the handles a test of routing needs. */
export interface LocalUpstream extends JsonHttpServer {
  /** Puts every call of the provider in a fault (an outage of one route), or back to normal with undefined. */
  setOutage(outage: ProviderOutage | undefined): void;
  /** The chat completions asked for, in order (the latest 1000): the model id and headers a route sends. */
  chatRequestsReceived: ReceivedChatRequest[];
  /** The Responses calls asked for natively, in order (the latest 1000): their bodies as they arrived. */
  responsesRequestsReceived: ReceivedResponsesRequest[];
}

const PROVIDER_NAME = "paysvc local development provider";

/**
 * An OpenAI-compatible development provider, which speaks Anthropic's Messages API too (POST /v1/messages, with
 * the chat's answers), so every endpoint answers without internet: deterministic completions with real token usage (streamed as server-sent events in several chunks), real PNG images, and
 * structured decisions. Failures on demand: see dev-faults.ts.
 */
export async function startLocalUpstream(options: LocalUpstreamOptions): Promise<LocalUpstream> {
  let outage: ProviderOutage | undefined;
  const faults = devFaults({ directives: options.faultDirectives === true, outage: () => outage });
  const chatRequestsReceived: ReceivedChatRequest[] = [];
  const chatOptions = { ...options, faults, received: chatRequestsReceived };
  const responsesRequestsReceived: ReceivedResponsesRequest[] = [];
  const server = await listen(
    async (request, response) => {
      const path = (request.url ?? "/").split("?")[0];
      if (request.method === "GET" && path === "/v1/models") {
        return sendJson(response, 200, {
          object: "list",
          data: defaultCatalog().chat.map(({ id }) => ({ id, object: "model", created: 0, owned_by: PROVIDER_NAME })),
        });
      }
      if (request.method === "POST" && path === "/v1/chat/completions")
        return devChatCompletion(request, response, chatOptions);
      if (request.method === "POST" && path === "/v1/responses")
        return devResponses(request, response, { ...chatOptions, receivedResponses: responsesRequestsReceived });
      // Anthropic's Messages API, natively (`?beta=true`, as Claude Code sends it, is a query: the path is the same).
      if (request.method === "POST" && path === "/v1/messages") return devMessages(request, response, chatOptions);
      if (request.method === "POST" && path === "/v1/images/generations")
        return devImageGeneration(request, response, faults);
      if (request.method === "POST" && path === "/v1/images/edits") return devImageEdit(request, response, faults);
      if (request.method === "GET" && path?.startsWith("/v1/images/files/")) return devImageFile(path, response);
      if (request.method === "POST" && path === "/v1/decisions") return devDecisions(request, response, faults);
      if (request.method === "POST" && path === "/v1/embeddings") return devEmbeddings(request, response, faults);
      sendJson(response, 404, {
        error: { message: `no route ${request.method} ${path}`, type: "invalid_request_error" },
      });
    },
    options.port,
    "local upstream",
  );
  return { ...server, setOutage: (next) => (outage = next), chatRequestsReceived, responsesRequestsReceived };
}
