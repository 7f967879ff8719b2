import type { Readable } from "node:stream";
import { Agent, request } from "undici";

// One keep-alive pool for every upstream call. undici's request is used directly: inside the Next.js server the
// global fetch is wrapped by the framework's caching layer, which costs milliseconds per call on this hot path.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

/**
 * An upstream's answer as undici gives it: no Web Response, Headers or Web stream is built for a JSON answer
 * (together about a tenth of a millisecond per call); `stream()` makes the Web stream an event stream needs.
 */
export interface UpstreamAnswer {
  status: number;
  json(): Promise<unknown>;
  text(): Promise<string>;
  /** The body as a Web stream read on demand. */
  stream(): ReadableStream<Uint8Array>;
  /** Drops the body unread. */
  discard(): Promise<void>;
}

/** One request to an upstream; a multipart body is encoded the way fetch would. */
export async function upstreamFetch(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string | FormData; signal: AbortSignal },
): Promise<UpstreamAnswer> {
  let body: string | Uint8Array | undefined;
  const headers = { ...init.headers };
  if (init.body instanceof FormData) {
    const encoded = new Response(init.body);
    headers["content-type"] = encoded.headers.get("content-type") ?? "multipart/form-data";
    body = new Uint8Array(await encoded.arrayBuffer());
  } else {
    body = init.body;
  }
  const answer = await request(url, { method: init.method, headers, body, signal: init.signal, dispatcher: agent });
  return {
    status: answer.statusCode,
    json: () => answer.body.json(),
    text: () => answer.body.text(),
    stream: () => webStream(answer.body),
    discard: () => answer.body.dump(),
  };
}

/**
 * A Web stream that reads the Node stream on demand. Node 20's `Readable.toWeb` closes its controller again when
 * the Node stream ends after the Web stream was cancelled, an uncaught exception in the server.
 */
function webStream(body: Readable): ReadableStream<Uint8Array> {
  const chunks = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        const { value, done } = await chunks.next();
        if (done) controller.close();
        else controller.enqueue(new Uint8Array(value.buffer, value.byteOffset, value.byteLength));
      },
      async cancel() {
        await chunks.return?.();
      },
    },
    { highWaterMark: 0 },
  );
}
