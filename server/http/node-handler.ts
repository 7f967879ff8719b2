import type { IncomingMessage, ServerResponse } from "node:http";
import { SERVICE_VERSION } from "../../config/version";
import { ApiError } from "../core/errors";
import type { Drain } from "../lifecycle/drain";
import { logEvent } from "../core/log";
import { inRequestSpan } from "../tracing/request-span";
import { jsonAnswer, type ApiAnswer, errorAnswer } from "./api-answer";
import { readApiRequest, sendAnswer } from "./node-http-adapter";
import type { Router } from "./router";
import { releaseUnreadBody } from "./unread-body";

/** How long a client refused by a draining process is told to wait: another instance takes it meanwhile. */
const RETRY_AFTER_SECONDS = "5";

/**
 * The Node handler of app/serve.mjs: returns false to leave a request to the framework when `framework` says the
 * path is its own (the console's pages, its files); answers every other one and returns true, a path that is no
 * endpoint's with the API's JSON 404. `origin` is the bind address, which the framework also gives its handlers as
 * request.url's. While `lifecycle.drain` drains, every request is answered 503 (`/health` with `status: draining`)
 * with `Connection: close`, nothing charged; the requests under way are counted until they are answered.
 */
export function nodeHandler(
  router: Router,
  origin: string,
  framework: (path: string) => boolean,
  lifecycle: { drain: Drain; network: string; streamStallMs?: number },
) {
  const { drain } = lifecycle;
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url?.split("?", 1)[0] ?? "/";
    if (drain.isDraining) {
      void sendAnswer(
        router.withCors(drainingAnswer(path, lifecycle.network), request.headers.origin ?? null),
        response,
      );
      return true;
    }
    if (framework(path)) return false;
    const method = request.method ?? "GET";
    const handle = router.answer(method, path);
    const leave = drain.enter();
    void inRequestSpan(request, router.has(method, path) ? path : undefined, (traced) =>
      readApiRequest(request, origin, traced)
        .then(async (apiRequest) => releaseUnreadBody(request, apiRequest, await handle(apiRequest)))
        .then((answer) => {
          traced?.answered(answer.status);
          return sendAnswer(answer, response, drain.deadline, lifecycle.streamStallMs);
        })
        .catch(async (error: unknown) => {
          traced?.span.fail(error);
          // A client that went away before its body ended: nobody is left to answer.
          if (!request.complete && request.destroyed) return void response.destroy();
          const trace_id = traced?.span.traceId;
          logEvent("error", "unhandled_error", { path, error: (error as Error).stack ?? String(error), trace_id });
          if (response.headersSent) response.destroy();
          else {
            const failed = errorAnswer(new ApiError("internal_error", "Internal server error"));
            traced?.answered(failed.status);
            await sendAnswer(router.withCors(failed, request.headers.origin ?? null), response);
          }
        })
        .finally(() => {
          traced?.end();
          leave();
        }),
    );
    return true;
  };
}

/** A draining process's answer: load balancers take it out of service, callers try again elsewhere. */
function drainingAnswer(path: string, network: string): ApiAnswer {
  const headers = { "retry-after": RETRY_AFTER_SECONDS, connection: "close", "cache-control": "no-store" };
  if (path === "/health") {
    return jsonAnswer({ status: "draining", network, version: SERVICE_VERSION }, { status: 503, headers });
  }
  const message = "The service is restarting; nothing was charged. Retry in a few seconds.";
  return errorAnswer(new ApiError("shutting_down", message, { headers }));
}
