import type { IncomingMessage } from "node:http";
import type { ApiAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";

/**
 * A body answered before it was read whole (413, 415, any early refusal) is drained up to this many bytes, well
 * past the largest body the service reads, so that its keep-alive connection serves the next request; a body
 * declared larger, or one that turns out larger, has its connection closed instead. Either way the next request
 * on the connection is answered, never left waiting behind an unread body. Draining is the kinder of the two:
 * closing while a client still sends resets its socket, and clients such as fetch then report EPIPE, not the 413.
 */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

const closing = (answer: ApiAnswer): ApiAnswer => ({ ...answer, headers: { ...answer.headers, connection: "close" } });

/** The rest of an unread body is read and dropped, or the connection closed. */
export function releaseUnreadBody(request: IncomingMessage, apiRequest: ApiRequest, answer: ApiAnswer): ApiAnswer {
  if (request.complete) return answer;
  // The body's stream stops taking data, so that it no longer pauses the request when its queue is full.
  if (apiRequest.body && !apiRequest.body.locked) apiRequest.body.cancel().catch(() => undefined);
  const declared = Number(request.headers["content-length"] ?? Number.NaN);
  if (Number.isFinite(declared) && declared > MAX_DRAINED_BYTES) return closing(answer);
  let drained = 0;
  request.on("data", (chunk: Buffer) => {
    drained += chunk.byteLength;
    if (drained > MAX_DRAINED_BYTES) request.socket.destroy();
  });
  request.resume();
  return answer;
}
