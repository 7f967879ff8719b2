import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { errorObject } from "../core/errors";
import { ShutdownCut } from "../lifecycle/drain";
import { logEvent } from "../core/log";
import type { ApiAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";
import type { CallTrace } from "../tracing/call-trace";

/**
 * Bodies up to this size, with a declared length, are read whole before the handler runs: one Buffer instead
 * of a Web stream. Larger or undeclared ones are streamed, so that the handler's size limit applies while it
 * reads.
 */
const WHOLE_BODY_BYTES = 64 * 1024;

/**
 * The request a handler reads, straight from Node's request: `origin` names the bind address, as the framework's
 * request.url does. Resolves once a small body has arrived whole; a larger one is streamed.
 */
export function readApiRequest(request: IncomingMessage, origin: string, trace?: CallTrace): Promise<ApiRequest> {
  const method = request.method ?? "GET";
  const base = {
    method,
    url: `${origin}${request.url ?? "/"}`,
    headers: headerReader(request.headers),
    peerAddress: request.socket.remoteAddress,
    trace,
  };
  if (method === "GET" || method === "HEAD") return Promise.resolve({ ...base, body: null });
  const declared = Number(request.headers["content-length"] ?? Number.NaN);
  if (!(declared <= WHOLE_BODY_BYTES)) return Promise.resolve({ ...base, body: bodyStream(request) });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    // A body that came in one chunk (the common case) is that chunk, not a copy of it.
    request.once("end", () =>
      resolve({ ...base, body: null, bodyBytes: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }),
    );
    // Also how a client that goes away mid-body shows: Node fails the request with "aborted".
    request.once("error", reject);
  });
}

/** `Headers.get` over Node's headers (already lower-cased; repeated ones joined as the Fetch standard does). */
function headerReader(headers: IncomingHttpHeaders): ApiRequest["headers"] {
  return {
    get(name) {
      const value = headers[name.toLowerCase()];
      if (value === undefined) return null;
      return Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

/**
 * The request body as a Web stream, read as the handler pulls. Not Readable.toWeb: on Node 20 it can close its
 * controller a second time when the request emits after its end, which throws outside any handler. What a
 * handler leaves unread (a body over the size limit) is drained, within a bound, by http/unread-body.ts, which
 * cancels this stream so that the request flows again.
 */
function bodyStream(request: IncomingMessage): ReadableStream<Uint8Array> {
  let open = true;
  return new ReadableStream<Uint8Array>(
    {
      start(controller) {
        request.pause();
        request.on("data", (chunk: Buffer) => {
          if (!open) return;
          controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
          if ((controller.desiredSize ?? 0) <= 0) request.pause();
        });
        request.once("end", () => {
          if (open) controller.close();
          open = false;
        });
        request.once("error", (error) => {
          if (open) controller.error(error);
          open = false;
        });
      },
      pull() {
        request.resume();
      },
      cancel() {
        open = false;
        request.resume();
      },
    },
    { highWaterMark: 1 },
  );
}

/** The last event of a stream the shutdown cut: an error in OpenAI's shape, which the official SDKs raise. */
const SHUTDOWN_EVENT = `data: ${JSON.stringify({
  error: errorObject(
    "shutting_down",
    "The service is restarting: this answer was cut short at the end of its shutdown grace; only what was passed on is billed",
  ),
})}\n\n`;

/**
 * Writes an answer to a Node response. A whole body goes out in one write with its length; an event stream is
 * written chunk by chunk as it arrives (its headers leave with the first chunk), and a client that goes away
 * cancels it, which releases whatever the stream holds (a prepaid reservation, the upstream call). `cut` ends a
 * stream still running (the shutdown's grace ran out): it is cancelled with ShutdownCut, billed what it passed on,
 * and ends with an error event. A caller that reads none of the stream for `stallMs` is cut as one that left: its
 * connection (and the provider's it holds) is not kept for as long as it likes. Resolves once the answer is out and
 * what its cancellation bills is done.
 */
export async function sendAnswer(
  answer: ApiAnswer,
  target: ServerResponse,
  cut?: AbortSignal,
  stallMs?: number,
): Promise<void> {
  const { body } = answer;
  if (typeof body === "string") {
    const headers = { ...answer.headers, "content-length": String(Buffer.byteLength(body)) };
    target.writeHead(answer.status, headers).end(body);
    try {
      answer.afterSent?.();
    } catch (error) {
      // The answer is out; what is left is to say what failed after it.
      logEvent("error", "after_sent_failed", { error: (error as Error).stack ?? String(error) });
    }
    return;
  }
  const reader = body.getReader();
  let cancelling: Promise<void> | undefined;
  const cancel = (reason?: unknown) => (cancelling ??= reader.cancel(reason).catch(() => undefined));
  // A client that left while the answer was being prepared has closed the response already: no close event is
  // coming, so the stream is cancelled here, or it would hold its reservation and its upstream call for good.
  if (target.destroyed) return cancel();
  target.once("close", () => {
    if (!target.writableFinished) void cancel();
  });
  const onCut = () => {
    void cancel(new ShutdownCut());
    // A caller that stopped reading gets no last event: its connection is closed, which ends the wait for it.
    if (target.writableNeedDrain) target.destroy();
  };
  if (cut?.aborted) onCut();
  else cut?.addEventListener("abort", onCut, { once: true });
  target.writeHead(answer.status, answer.headers);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || cancelling) break;
      if (target.destroyed) return await cancel();
      if (!target.write(value) && !(await drained(target, stallMs))) {
        logEvent("warn", "stream_reader_stalled", { stall_ms: stallMs });
        await cancel();
        target.destroy();
        return;
      }
    }
    // Cut (or left): what it passed on is billed before the last event, so the process waits for the charge.
    await cancelling;
    if (cut?.aborted && !target.destroyed) target.write(SHUTDOWN_EVENT);
    target.end();
  } catch {
    // The stream failed after the status line was sent: all that is left is to cut the connection.
    target.destroy();
    await cancelling;
  } finally {
    cut?.removeEventListener("abort", onCut);
  }
}

/**
 * Whether the caller read what was written (drain), or left (close), within `stallMs` (unbounded when undefined);
 * false when it did neither.
 */
function drained(target: ServerResponse, stallMs: number | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const done = (read: boolean) => {
      clearTimeout(timer);
      target.off("drain", onDrain).off("close", onDrain);
      resolve(read);
    };
    const onDrain = () => done(true);
    const timer = stallMs === undefined ? undefined : setTimeout(() => done(false), stallMs);
    target.once("drain", onDrain).once("close", onDrain);
  });
}
