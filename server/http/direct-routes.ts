import type { IncomingMessage, ServerResponse } from "node:http";
import { loadServiceConfig } from "../../config/env";
import { createAppContext, type AppContext } from "../app-context";
import { createChatCompletion } from "../chat/create-chat-completion";
import { createDecision } from "../decisions/create-decision";
import { serveDiscoveryDocument } from "../discovery/discovery-documents";
import { createEmbeddings } from "../embeddings/create-embeddings";
import { ApiError } from "../errors";
import { createFreeChatCompletion, freeChatQuota } from "../free-tier/create-free-chat-completion";
import { healthResponse } from "../health/check-health";
import { createImage } from "../images/create-image";
import { logEvent } from "../log";
import { listModels } from "../models/list-models";
import { prepaidStatus } from "../prepaid/prepaid-status";
import { purchasePrepaidCode } from "../prepaid/purchase-prepaid-code";
import { createResponse } from "../responses/create-response";
import { jsonAnswer, type ApiAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";
import { answerErrors } from "./handle-route";
import { readApiRequest, sendAnswer } from "./node-http-adapter";

type Handler = (context: AppContext, request: ApiRequest) => Promise<ApiAnswer>;

/**
 * Every API endpoint, answered by app/serve.mjs without the framework's per-request work (about 2 ms of every
 * request, more with a body); the framework serves the console's pages. Serving them all here also keeps the
 * framework's own copy of server/ unloaded until a page is visited. The route files in app/ serve the same
 * handlers under `next start` and `next dev`, and answer methods not listed here (405).
 */
const routes: Record<string, Handler> = {
  "POST /v1/chat/completions": createChatCompletion,
  "POST /api/v1/chat/completions": createChatCompletion,
  "POST /v1/responses": createResponse,
  "POST /api/v1/responses": createResponse,
  "POST /api/v1/images/generations": (context, request) => createImage(context, request, false),
  "POST /api/v1/images/image2image": (context, request) => createImage(context, request, true),
  "POST /jev": createDecision,
  "POST /prepaid/codes": (context, request) => purchasePrepaidCode(context, request, false),
  "POST /prepaid/codes/auto": (context, request) => purchasePrepaidCode(context, request, true),
  "POST /v1/embeddings": createEmbeddings,
  "POST /v1/free/chat/completions": createFreeChatCompletion,
  "GET /v1/free/chat/completions/quota": async (context, request) => freeChatQuota(context, request),
  "GET /v1/models": async (context) => jsonAnswer(listModels(context.config.network)),
  "GET /v1/prepaid/status": async (context, request) => prepaidStatus(context, request),
  "GET /health": (context) => healthResponse(context),
  "GET /.well-known/x402": async (context, request) => serveDiscoveryDocument(context, request, ".well-known/x402"),
  "GET /openapi.json": async (context, request) => serveDiscoveryDocument(context, request, "openapi.json"),
  "GET /llms.txt": async (context, request) => serveDiscoveryDocument(context, request, "llms.txt"),
  "GET /AI-AGENTS.md": async (context, request) => serveDiscoveryDocument(context, request, "AI-AGENTS.md"),
};

// This copy of server/ is loaded by app/serve.mjs, beside the copy the framework bundles; objects of one copy must
// not meet the other's classes (instanceof), so it builds its own context (the state they share is the database).
let context: AppContext | undefined;

function contextOf(): AppContext {
  context ??= createAppContext(loadServiceConfig());
  return context;
}

const handlers = new Map(
  Object.entries(routes).map(([route, handler]) => [route, answerErrors((request) => handler(contextOf(), request))]),
);

/**
 * The Node handler of a request these routes answer, or undefined to leave it to the framework. `origin` is the
 * bind address, which the framework also gives its handlers as request.url's origin.
 */
export function directRoute(
  method: string | undefined,
  url: string | undefined,
  origin: string,
): ((request: IncomingMessage, response: ServerResponse) => void) | undefined {
  const path = url?.split("?", 1)[0];
  const handle = handlers.get(`${method} ${path}`);
  if (!handle) return undefined;
  return (request, response) => {
    readApiRequest(request, origin)
      .then(handle)
      .then((answer) => sendAnswer(answer, response))
      .catch(async (error: unknown) => {
        // A client that went away before its body ended: nobody is left to answer.
        if (!request.complete && request.destroyed) return void response.destroy();
        logEvent("error", "unhandled_error", { path, error: (error as Error).stack ?? String(error) });
        if (response.headersSent) response.destroy();
        else await sendAnswer(new ApiError("internal_error", "Internal server error").toAnswer(), response);
      });
  };
}
