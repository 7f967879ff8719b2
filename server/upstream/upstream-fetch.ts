import { Readable } from "node:stream";
import { Agent, request } from "undici";

// One keep-alive pool for every upstream call. undici's request is used directly: inside the Next.js server the
// global fetch is wrapped by the framework's caching layer, which costs milliseconds per call on this hot path.
const agent = new Agent({ keepAliveTimeout: 30_000, connections: 256 });

/** fetch's contract (a Web Response) over undici's request; a multipart body is encoded the way fetch would. */
export async function upstreamFetch(
  url: string,
  init: { method: "GET" | "POST"; headers: Record<string, string>; body?: string | FormData; signal: AbortSignal },
): Promise<Response> {
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
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(answer.headers)) {
    if (Array.isArray(value)) value.forEach((item) => responseHeaders.append(name, item));
    else if (value !== undefined) responseHeaders.set(name, value);
  }
  const hasBody = answer.statusCode !== 204 && answer.statusCode !== 304;
  return new Response(hasBody ? (Readable.toWeb(answer.body) as ReadableStream<Uint8Array>) : null, {
    status: answer.statusCode,
    headers: responseHeaders,
  });
}
