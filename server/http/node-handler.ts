import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../errors";
import { logEvent } from "../log";
import { readApiRequest, sendAnswer } from "./node-http-adapter";
import type { Router } from "./router";
import { releaseUnreadBody } from "./unread-body";

/**
 * The Node handler of app/serve.mjs: returns false to leave a request to the framework when `framework` says the
 * path is its own (the console's pages, its files); answers every other one and returns true, a path that is no
 * endpoint's with the API's JSON 404. `origin` is the bind address, which the framework also gives its handlers as
 * request.url's.
 */
export function nodeHandler(router: Router, origin: string, framework: (path: string) => boolean) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url?.split("?", 1)[0] ?? "/";
    if (framework(path)) return false;
    const handle = router.answer(request.method ?? "GET", path);
    readApiRequest(request, origin)
      .then(async (apiRequest) => releaseUnreadBody(request, apiRequest, await handle(apiRequest)))
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
