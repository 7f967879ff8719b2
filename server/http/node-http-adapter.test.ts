import type { ApiError } from "../core/errors";
import { createServer, request as httpRequest, type Server, type ServerResponse } from "node:http";
import { connect, type AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { jsonAnswer, type ApiAnswer, eventStreamAnswer, errorAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";
import { readApiRequest, sendAnswer } from "./node-http-adapter";
import { readJsonBody } from "./read-json-body";
import { parseEventStream } from "./event-stream";

let server: Server | undefined;
afterEach(
  () =>
    new Promise<void>((resolve) => {
      if (!server) return resolve();
      server.close(() => resolve());
      server.closeAllConnections();
    }),
);

/** A Node server answering every request with `answer(apiRequest)` through the adapter; resolves with its URL. */
async function serve(answer: (request: ApiRequest) => Promise<ApiAnswer>): Promise<string> {
  server = createServer((request, response) => {
    void readApiRequest(request, "http://127.0.0.1:1")
      .then(answer)
      .then((reply) => sendAnswer(reply, response));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** What the handler saw of a request: its URL, method, a header, whether the body came whole, and the body. */
const echo = async (request: ApiRequest) =>
  jsonAnswer(
    {
      url: request.url,
      method: request.method,
      custom: request.headers.get("x-custom"),
      whole: request.bodyBytes !== undefined,
      body: (await readJsonBody(request, 1_000_000, { optional: true })).value ?? null,
    },
    { status: 201, headers: { "Server-Timing": "a;dur=1.00" } },
  );

const json = { "content-type": "application/json" };

/** Sends `body` in chunks without a Content-Length (chunked encoding). */
function postChunked(url: string, chunks: string[]): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: "POST", headers: json }, (reply) => {
      let body = "";
      reply.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      reply.on("end", () => resolve({ status: reply.statusCode ?? 0, body }));
    });
    outgoing.on("error", reject);
    for (const chunk of chunks) outgoing.write(chunk);
    outgoing.end();
  });
}

describe("node-http-adapter", () => {
  it("writes a JSON answer in one piece with its status, headers and exact length", async () => {
    const body = { text: "naïve ✓", list: [1, 2, 3] };
    const url = await serve(async () => jsonAnswer(body, { status: 402, headers: { "PAYMENT-REQUIRED": "abc" } }));
    const response = await fetch(url);
    expect(response.status).toBe(402);
    expect(response.headers.get("payment-required")).toBe("abc");
    expect(response.headers.get("content-type")).toBe("application/json");
    const text = await response.text();
    expect(response.headers.get("content-length")).toBe(String(Buffer.byteLength(text)));
    expect(JSON.parse(text)).toEqual(body);
  });

  it("runs an answer's afterSent once the body is handed to the socket, and a failing one spoils nothing", async () => {
    const order: string[] = [];
    let calls = 0;
    const url = await serve(async () => ({
      ...jsonAnswer({ ok: true }),
      afterSent: () => {
        calls++;
        order.push("afterSent");
        if (calls === 2) throw new Error("bookkeeping failed");
      },
    }));
    for (let attempt = 0; attempt < 2; attempt++) {
      const response = await fetch(url);
      order.push("received");
      expect(await response.json()).toEqual({ ok: true });
    }
    expect(order).toEqual(["afterSent", "received", "afterSent", "received"]);
  });

  it("gives the handler the method, path, query and headers, and a small body read whole", async () => {
    const url = await serve(echo);
    const response = await fetch(`${url}/v1/thing?x=1`, {
      method: "POST",
      headers: { "x-custom": "yes", "content-type": "application/json" },
      body: JSON.stringify({ hello: "wörld" }),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("server-timing")).toBe("a;dur=1.00");
    expect(await response.json()).toEqual({
      url: "http://127.0.0.1:1/v1/thing?x=1",
      method: "POST",
      custom: "yes",
      whole: true,
      body: { hello: "wörld" },
    });
  });

  it("streams a body without a declared length, or larger than a whole read takes, to the handler", async () => {
    const url = await serve(echo);
    const chunked = await postChunked(url, ['{"parts":', '["a",', '"b"]}']);
    expect(chunked.status).toBe(201);
    expect(JSON.parse(chunked.body)).toMatchObject({ whole: false, body: { parts: ["a", "b"] } });

    const large = { text: "x".repeat(100_000) };
    const response = await fetch(url, { method: "POST", headers: json, body: JSON.stringify(large) });
    expect(await response.json()).toMatchObject({ whole: false, body: large });
  });

  it("fails the read of a small body whose client goes away before it ends", async () => {
    let failure: (reason: unknown) => void = () => undefined;
    const failed = new Promise((resolve) => (failure = resolve));
    server = createServer((request) => {
      readApiRequest(request, "http://127.0.0.1:1").then(() => failure("read whole"), failure);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const outgoing = httpRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
      method: "POST",
      headers: { ...json, "content-length": "100" },
    });
    outgoing.on("error", () => undefined);
    outgoing.write('{"partial":');
    await new Promise((resolve) => setTimeout(resolve, 50));
    outgoing.destroy();
    expect(String(await failed)).toMatch(/aborted/);
  });

  it("refuses a whole-read body over the handler's limit", async () => {
    const url = await serve(async (request) => {
      try {
        await readJsonBody(request, 10);
        return jsonAnswer({ read: true });
      } catch (error) {
        return errorAnswer(error as ApiError);
      }
    });
    const response = await fetch(url, {
      method: "POST",
      headers: json,
      body: JSON.stringify({ long: "enough to pass ten bytes" }),
    });
    expect(response.status).toBe(413);
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
      return eventStreamAnswer(parseEventStream(body), {});
    });
    const abort = new AbortController();
    const response = await fetch(url, { signal: abort.signal });
    expect(response.headers.get("content-type")).toBe("text/event-stream; charset=utf-8");
    expect(response.headers.get("content-length")).toBeNull();
    const reader = response.body!.getReader();
    const first = await reader.read();
    // The stream never ends, so its first event arriving at all shows it is passed on unbuffered; a loaded machine
    // may deliver the next event in the same read.
    expect(new TextDecoder().decode(first.value)).toMatch(/^data: 1\n\n(data: \d+\n\n)*$/);
    abort.abort();
    await wasCancelled;
  });

  it("cancels an event stream whose client went away while it was being prepared", async () => {
    let cancelled: () => void = () => undefined;
    const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
    let clientGone: () => void = () => undefined;
    const gone = new Promise<void>((resolve) => (clientGone = resolve));
    let pulls = 0;
    server = createServer((request, response) => {
      response.once("close", clientGone);
      // The answer is ready only after the client has gone and its response has closed.
      void gone.then(() => {
        const body = new ReadableStream<Uint8Array>({
          pull: (controller) => void controller.enqueue(new TextEncoder().encode(`data: ${++pulls}\n\n`)),
          cancel: () => cancelled(),
        });
        return sendAnswer(eventStreamAnswer(parseEventStream(body), {}), response);
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const outgoing = httpRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    outgoing.on("error", () => undefined).end();
    await new Promise((resolve) => setTimeout(resolve, 50));
    outgoing.destroy();
    await wasCancelled;
    expect(pulls).toBeLessThanOrEqual(1);
  });

  it("cuts a stream whose caller reads none of it for the stall time, as one that left, and closes its socket", async () => {
    let cancelled: () => void = () => undefined;
    const wasCancelled = new Promise<void>((resolve) => (cancelled = resolve));
    let pulls = 0;
    // 64 KB events, faster than a socket that is never read can take them: its buffers fill and stay full.
    const event = new TextEncoder().encode(`data: ${"x".repeat(65_536)}\n\n`);
    let sent: Promise<void> | undefined;
    let answered: ServerResponse | undefined;
    server = createServer((_request, response) => {
      answered = response;
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setImmediate(resolve));
          pulls++;
          controller.enqueue(event);
        },
        cancel: () => cancelled(),
      });
      sent = sendAnswer(eventStreamAnswer(parseEventStream(body), {}), response, undefined, 300);
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
    // Read nothing: the socket's own buffer fills, then the server's.
    socket.pause();
    await wasCancelled;
    await sent;
    // Its connection is closed (a paused client learns it when it reads again).
    expect(answered?.destroyed).toBe(true);
    socket.destroy();
    // Cut once the buffers were full (a few MB on loopback): a bounded number of events, however long it waited.
    expect(pulls).toBeLessThan(500);
  });
});
