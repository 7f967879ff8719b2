import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiError } from "../errors";
import { logEvent } from "../log";
import type { ApiAnswer } from "./api-answer";
import { readApiRequest, sendAnswer } from "./node-http-adapter";
import type { Router } from "./router";

/**
 * A body answered before it was read whole (413, 415, any early refusal) is drained up to this many more bytes, so
 * that its keep-alive connection serves the next request; past it, the connection is closed instead.
 */
const MAX_DRAINED_BYTES = 4 * 1024 * 1024;

/**
 * The Node handler of the requests the router knows, or undefined to leave the request to the framework (the
 * console's pages). `origin` is the bind address, which the framework also gives its handlers as request.url's.
 */
export function nodeHandler(router: Router, origin: string) {
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const path = request.url?.split("?", 1)[0] ?? "/";
    const route = router.find(request.method ?? "GET", path);
    if (!route) return false;
    readApiRequest(request, origin)
      .then(route.handle)
      .then((answer) => sendAnswer(releaseUnreadBody(request, answer), response))
      .catch(async (error: unknown) => {
        // A client that went away before its body ended: nobody is left to answer.
        if (!request.complete && request.destroyed) return void response.destroy();
        logEvent("error", "unhandled_error", { path, error: (error as Error).stack ?? String(error) });
        if (response.headersSent) response.destroy();
        else await sendAnswer(new ApiError("internal_error", "Internal server error").toAnswer(), response);
      });
    return true;
  };
}

/**
 * An answer given before the request's body ended leaves the rest unread, and a paused request blocks its
 * connection: the next request on it would wait for the client's timeout. A small remainder is read and dropped;
 * a large one (or one that turns out larger than it said) ends the connection after the answer.
 */
function releaseUnreadBody(request: IncomingMessage, answer: ApiAnswer): ApiAnswer {
  if (request.complete) return answer;
  const declared = Number(request.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > MAX_DRAINED_BYTES) {
    return { ...answer, headers: { ...answer.headers, connection: "close" } };
  }
  let drained = 0;
  request.on("data", (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > MAX_DRAINED_BYTES) request.socket.destroy();
  });
  request.resume();
  return answer;
}
