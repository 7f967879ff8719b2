import type { IncomingMessage, ServerResponse } from "node:http";
import { jsonTextOf } from "./json-response";

/**
 * A Web Request for a Node request, as a route handler receives it from the framework: `origin` names the bind
 * address (as the framework's request.url does), the body is streamed so that the handler's size limits apply
 * while it reads.
 */
export function toWebRequest(request: IncomingMessage, origin: string): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const method = request.method ?? "GET";
  const hasBody = method !== "GET" && method !== "HEAD";
  return new Request(`${origin}${request.url ?? "/"}`, {
    method,
    headers,
    body: hasBody ? bodyStream(request) : undefined,
    duplex: hasBody ? "half" : undefined,
  } as RequestInit);
}

/**
 * The request body as a Web stream, read as the handler pulls. Not Readable.toWeb: on Node 20 it can close its
 * controller a second time when the request emits after its end, which throws outside any handler. A handler
 * that stops reading (a body over the size limit) leaves the rest to be drained, so that its answer still goes out.
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

function headerObject(headers: Headers): Record<string, string | string[]> {
  const result: Record<string, string | string[]> = {};
  headers.forEach((value, name) => {
    if (name !== "set-cookie") result[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) result["set-cookie"] = cookies;
  return result;
}

/**
 * Writes a Web Response to a Node response. A whole body goes out in one write with its length; an event stream
 * is written chunk by chunk as it arrives (its headers leave with the first chunk), and a client that goes away
 * cancels it, which releases whatever the stream holds (a prepaid reservation, the upstream call).
 */
export async function sendWebResponse(response: Response, target: ServerResponse): Promise<void> {
  const headers = headerObject(response.headers);
  if (!response.body) {
    target.writeHead(response.status, headers).end();
    return;
  }
  const json = jsonTextOf(response);
  if (json !== undefined) {
    headers["content-length"] = String(Buffer.byteLength(json));
    target.writeHead(response.status, headers).end(json);
    return;
  }
  if (!/^text\/event-stream/i.test(response.headers.get("content-type") ?? "")) {
    const bytes = Buffer.from(await response.arrayBuffer());
    headers["content-length"] = String(bytes.byteLength);
    target.writeHead(response.status, headers).end(bytes);
    return;
  }
  const reader = response.body.getReader();
  target.once("close", () => {
    if (!target.writableFinished) reader.cancel().catch(() => undefined);
  });
  target.writeHead(response.status, headers);
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (target.destroyed) return;
      if (!target.write(value)) await new Promise((resolve) => target.once("drain", resolve).once("close", resolve));
    }
    target.end();
  } catch {
    // The stream failed after the status line was sent: all that is left is to cut the connection.
    target.destroy();
  }
}
