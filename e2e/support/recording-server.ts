import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as it reached the recording server: nothing dropped, the body as sent. */
export type RecordedRequest = {
  method: string;
  /** Path and query, as sent (`/v1/messages?beta=true`). */
  url: string;
  path: string;
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The body as text ("" when none). */
  rawBody: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  body: unknown;
};

/** Answers one recorded request; whatever it does not end, the server ends with a 404. */
export type Responder = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export type RecordingServer = {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  url: string;
  /** Every request received, in order of arrival. */
  requests: RecordedRequest[];
  close: () => Promise<void>;
};

/** A local HTTP server that records every request and answers each with `respond` (a 404 by default). */
export async function startRecordingServer(respond: Responder = () => undefined): Promise<RecordingServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
    incoming.on("end", () => {
      const rawBody = Buffer.concat(chunks).toString("utf8");
      const parsed = new URL(incoming.url ?? "/", "http://recording.local");
      const request: RecordedRequest = {
        method: incoming.method ?? "GET",
        url: incoming.url ?? "/",
        path: parsed.pathname,
        query: Object.fromEntries(parsed.searchParams),
        headers: incoming.headers,
        rawBody,
        body: parseJson(rawBody),
      };
      requests.push(request);
      Promise.resolve()
        .then(() => respond(request, response))
        .catch((error: unknown) => {
          if (!response.headersSent) response.writeHead(500, { "content-type": "text/plain" });
          response.end(String(error));
        })
        .finally(() => {
          if (response.writableEnded) return;
          if (!response.headersSent) response.writeHead(404, { "content-type": "application/json" });
          response.end(JSON.stringify({ error: `not recorded: ${request.method} ${request.path}` }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes server-sent events (`event:` + `data:` JSON) and ends the response. */
export function writeSse(response: ServerResponse, events: { event?: string; data: unknown }[]) {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    response.write(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(data)}\n\n`);
  }
  response.end();
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
