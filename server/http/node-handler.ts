import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../errors";
import { logEvent } from "../log";
import { readApiRequest, sendAnswer } from "./node-http-adapter";
import type { Router } from "./router";
import { releaseUnreadBody } from "./unread-body";

/**
 * The Node handler of app/serve.mjs: answers the requests the router knows and returns true, or returns false to
 * leave the request to the framework (the console's pages). `origin` is the bind address, which the framework
 * also gives its handlers as request.url's.
 */
export function nodeHandler(router: Router, origin: string) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url?.split("?", 1)[0] ?? "/";
    const route = router.find(request.method ?? "GET", path);
    if (!route) return false;
    readApiRequest(request, origin)
      .then(async (apiRequest) => releaseUnreadBody(request, apiRequest, await route.handle(apiRequest)))
      .then((answer) => sendAnswer(answer, response))
      .catch(async (error: unknown) => {
        // A client that went away before its body ended: nobody is left to answer.
        if (!request.complete && request.destroyed) return void response.destroy();
        logEvent("error", "unhandled_error", { path, error: (error as Error).stack ?? String(error) });
        if (response.headersSent) response.destroy();
        else {
          const failed = new ApiError("internal_error", "Internal server error").toAnswer();
          await sendAnswer(router.withCors(failed, request.headers.origin ?? null), response);
        }
      });
    return true;
  };
}
