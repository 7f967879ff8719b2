import { Agent, request } from "undici";
import { UpstreamError } from "./upstream-error";

// One keep-alive pool for every upstream call. undici's request is used directly: inside the Next.js server the
// global fetch is wrapped by the framework's caching layer, which costs milliseconds per call on this hot path.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

/**
 * An upstream's answer as undici's `request` gives it, for a body read as it arrives (an event stream), or not
 * at all: no Web Response or Headers is built.
 */
export interface UpstreamAnswer {
  status: number;
  text(): Promise<string>;
  /** The body's chunks as they arrive; `return()` abandons the rest (and the request). */
  chunks(): AsyncIterator<Buffer, undefined>;
  /** Drops the body unread. */
  discard(): Promise<void>;
  /**
   * Closes the connection, which ends the upstream's work, even while a read of `chunks()` waits: the iterator's
   * own `return()` waits for that read, which a silent upstream may not finish for minutes.
   */
  abandon(): void;
}

export interface UpstreamInit {
  method: "GET" | "POST";
  headers: Record<string, string>;
  body?: string | FormData;
  signal: AbortSignal;
}

/** The headers and bytes to send: a multipart form is encoded the way fetch would. */
async function encoded(
  init: Omit<UpstreamInit, "signal">,
): Promise<{ headers: Record<string, string>; body?: string | Uint8Array }> {
  if (!(init.body instanceof FormData)) return { headers: init.headers, body: init.body };
  const form = new Response(init.body);
  return {
    headers: { ...init.headers, "content-type": form.headers.get("content-type") ?? "multipart/form-data" },
    body: new Uint8Array(await form.arrayBuffer()),
  };
}

/** One request to an upstream whose answer is streamed (see `upstreamWhole` for one wanted whole). */
export async function upstreamFetch(url: string, init: UpstreamInit): Promise<UpstreamAnswer> {
  const { headers, body } = await encoded(init);
  const answer = await request(url, { method: init.method, headers, body, signal: init.signal, dispatcher: agent });
  return {
    status: answer.statusCode,
    text: () => answer.body.text(),
    chunks: () => answer.body[Symbol.asyncIterator]() as AsyncIterator<Buffer, undefined>,
    discard: () => answer.body.dump(),
    abandon: () => {
      // The body then fails with "Request aborted", an 'error' event nobody else may be listening for any more.
      answer.body.on("error", () => undefined);
      answer.body.destroy();
    },
  };
}

/**
 * One request whose answer is wanted whole (a JSON completion): the bytes are collected by a handler on undici's
 * dispatcher, without the body stream and promise hops of `request`. Measured alone against the local upstream,
 * a call cost 0.06-0.08 ms of CPU and 0.14 ms of wall time this way, against 0.11-0.18 and 0.19-0.28 ms.
 */
export async function upstreamWhole(
  target: { origin: string; path: string },
  init: Omit<UpstreamInit, "signal"> & { timeoutMs: number; maxBytes: number; signal?: AbortSignal },
): Promise<{ status: number; body: Buffer }> {
  const { headers, body } = await encoded(init);
  const { origin, path } = target;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    let status = 0;
    let abort: ((reason: Error) => void) | undefined;
    // Built only when the time runs out: an Error captures a stack, which every call would otherwise pay for.
    let expired: UpstreamError | undefined;
    // A plain timer: the call needs no AbortSignal, which would add an event listener for the same effect.
    const timer = setTimeout(() => {
      expired = new UpstreamError("timeout", `upstream did not answer within ${init.timeoutMs} ms`);
      abort?.(expired);
    }, init.timeoutMs);
    // The caller gave up (a payment refused while the call ran): the request is abandoned as a timeout's is.
    const { signal } = init;
    const abandoned = () => {
      expired = new UpstreamError("network", "upstream call abandoned: its payment was refused");
      abort?.(expired);
    };
    signal?.addEventListener("abort", abandoned, { once: true });
    if (signal?.aborted) abandoned();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", abandoned);
    };
    try {
      agent.dispatch({ origin, path, method: init.method, headers, body }, {
        onConnect(abortRequest: (reason: Error) => void) {
          abort = abortRequest;
          if (expired) abortRequest(expired);
        },
        onHeaders(statusCode: number) {
          status = statusCode;
          return true;
        },
        onData(chunk: Buffer) {
          received += chunk.byteLength;
          if (received > init.maxBytes) {
            abort?.(new UpstreamError("protocol", `upstream answer is larger than ${init.maxBytes} bytes`));
            return false;
          }
          chunks.push(chunk);
          return true;
        },
        onComplete() {
          done();
          resolve({ status, body: Buffer.concat(chunks) });
        },
        onError(error: Error) {
          done();
          reject(expired ?? error);
        },
      } as unknown as Parameters<Agent["dispatch"]>[1]);
    } catch (error) {
      // Options undici refuses outright.
      done();
      reject(error);
    }
  });
}
