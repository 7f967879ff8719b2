import type { IncomingMessage, ServerResponse } from "node:http";
import { loadServiceConfig } from "../../config/env";
import { createAppContext, type AppContext } from "../app-context";
import { createChatCompletion } from "../chat/create-chat-completion";
import { ApiError } from "../errors";
import { logEvent } from "../log";
import { listModels } from "../models/list-models";
import { createResponse } from "../responses/create-response";
import { handleRoute } from "./handle-route";
import { sendWebResponse, toWebRequest } from "./node-http-adapter";
import { jsonResponse } from "./json-response";

type Handler = (context: AppContext, request: Request) => Promise<Response>;

/**
 * The hot API endpoints, answered by app/serve.mjs without the framework's per-request work (about 2 ms of every
 * request, more with a body). The route files in app/ serve the same handlers under `next start` and `next dev`.
 */
const routes: Record<string, Handler> = {
  "POST /v1/chat/completions": createChatCompletion,
  "POST /api/v1/chat/completions": createChatCompletion,
  "POST /v1/responses": createResponse,
  "POST /api/v1/responses": createResponse,
  "GET /v1/models": async (context) => jsonResponse(listModels(context.config.network)),
};

// This copy of server/ is loaded by app/serve.mjs, beside the copy the framework bundles; objects of one copy must
// not meet the other's classes (instanceof), so it builds its own context (the state they share is the database).
let context: AppContext | undefined;

function contextOf(): AppContext {
  context ??= createAppContext(loadServiceConfig());
  return context;
}

const handlers = new Map(
  Object.entries(routes).map(([route, handler]) => [route, handleRoute((request) => handler(contextOf(), request))]),
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
    handle(toWebRequest(request, origin))
      .then((answer) => sendWebResponse(answer, response))
      .catch(async (error: unknown) => {
        logEvent("error", "unhandled_error", { path, error: (error as Error).stack ?? String(error) });
        if (response.headersSent) response.destroy();
        else await sendWebResponse(new ApiError("internal_error", "Internal server error").toResponse(), response);
      });
  };
}
