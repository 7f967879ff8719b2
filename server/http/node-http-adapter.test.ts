import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { jsonResponse, jsonTextOf } from "./json-response";
import { sendWebResponse, toWebRequest } from "./node-http-adapter";

let server: Server | undefined;
afterEach(
  () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

/** A Node server answering every request with `answer(webRequest)` through the adapter; resolves with its URL. */
async function serve(answer: (request: Request) => Promise<Response>): Promise<string> {
  server = createServer((request, response) => {
    void answer(toWebRequest(request, "http://127.0.0.1:1")).then((web) => sendWebResponse(web, response));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe("node-http-adapter", () => {
  it("writes a jsonResponse's kept text as it is, with its status, headers and exact length", async () => {
    const body = { text: "naïve ✓", list: [1, 2, 3] };
    const url = await serve(async () => jsonResponse(body, { status: 402, headers: { "PAYMENT-REQUIRED": "abc" } }));
    const response = await fetch(url);
    expect(response.status).toBe(402);
    expect(response.headers.get("payment-required")).toBe("abc");
    expect(response.headers.get("content-type")).toBe("application/json");
    const text = await response.text();
    expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).toEqual(body);
  });

  it("forgets a jsonResponse's kept text once its body has been read", async () => {
    const answer = jsonResponse({ a: 1 });
    expect(jsonTextOf(answer)).toBe('{"a":1}');
    expect(await answer.text()).toBe('{"a":1}');
    expect(jsonTextOf(answer)).toBeUndefined();
  });

  it("gives the handler the method, path, query, headers and body, and sends a whole body with its length", async () => {
    const url = await serve(async (request) =>
      Response.json(
        {
          url: request.url,
          method: request.method,
          custom: request.headers.get("x-custom"),
          body: await request.text(),
        },
        { status: 201, headers: { "Server-Timing": "a;dur=1.00" } },
      ),
    );
    const response = await fetch(`${url}/v1/thing?x=1`, {
      method: "POST",
      headers: { "x-custom": "yes" },
      body: "hello",
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("content-length")).not.toBeNull();
    expect(response.headers.get("server-timing")).toBe("a;dur=1.00");
    expect(await response.json()).toEqual({
      url: "http://127.0.0.1:1/v1/thing?x=1",
      method: "POST",
      custom: "yes",
      body: "hello",
    });
  });

  it("passes an event stream on chunk by chunk, and cancels it when the client goes away", async () => {
    let pulls = 0;
    let cancelled: () => void = () => undefined;
    const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
    const encoder = new TextEncoder();
    const url = await serve(async () => {
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          pulls++;
          controller.enqueue(encoder.encode(`data: ${pulls}\n\n`));
          await new Promise((resolve) => setTimeout(resolve, 5));
        },
        cancel: () => cancelled(),
      });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    });
    const abort = new AbortController();
    const response = await fetch(url, { signal: abort.signal });
    expect(response.headers.get("content-length")).toBeNull();
    const reader = response.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toBe("data: 1\n\n");
    abort.abort();
    await wasCancelled;
  });
});
