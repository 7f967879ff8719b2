import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JsonHttpServer } from "../../cli/lib/json-http-server";
import { startLocalUpstream } from "../../cli/dev-stack/local-upstream";
import { waitFor } from "../../cli/dev-stack/wait-for";
import { OpenAiUpstream } from "./openai-upstream";
import { UpstreamError } from "./upstream-error";
import { writeEventStream } from "../http/event-stream";

describe("a stream from the development upstream, over HTTP", () => {
  let provider: JsonHttpServer;
  let upstream: OpenAiUpstream;
  beforeEach(async () => {
    provider = await startLocalUpstream({ port: 0, streamDeltas: 8, faultDirectives: true });
    upstream = new OpenAiUpstream({ baseUrl: `${provider.url}/v1`, apiKey: undefined, timeoutMs: 5_000 });
  });
  afterEach(() => provider.stop());

  const stream = (content: string) =>
    upstream.startStream("/chat/completions", {
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content }],
      stream: true,
    });

  it("passes every event on, then ends", async () => {
    const started = await stream("hello stream");
    const text = await new Response(writeEventStream(started.body)).text();
    expect(text).toContain('"content":"');
    expect(text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });

  it("closes the upstream connection when abandoned while the upstream is silent", async () => {
    const served: Socket[] = [];
    provider.server.on("request", (request: IncomingMessage) => served.push(request.socket));
    const started = await stream("[paysvc-dev-fault:stall-mid-stream] think at length");
    const reader = started.body.getReader();
    // Read until a read waits on the silent upstream; abandoning must not wait for it.
    let pending = reader.read();
    const quiet = () => new Promise<false>((resolve) => setTimeout(() => resolve(false), 200));
    while (await Promise.race([pending.then(() => true), quiet()])) pending = reader.read();
    expect(served.map((socket) => socket.destroyed)).toEqual([false]);
    await reader.cancel();
    await waitFor(async () => served[0]!.destroyed, { timeoutMs: 2_000, what: "the upstream connection to close" });
    expect((await pending).done).toBe(true);
  });
});

describe("whole answers and the base URL, over HTTP", () => {
  let provider: JsonHttpServer;
  beforeEach(async () => {
    provider = await startLocalUpstream({ port: 0, streamDeltas: 8, faultDirectives: true });
  });
  afterEach(() => provider.stop());

  it("puts each path under its path, with its query, for whole answers and streams alike", async () => {
    const seen: string[] = [];
    provider.server.on("request", (request: IncomingMessage) => seen.push(request.url ?? ""));
    const upstream = new OpenAiUpstream({
      baseUrl: `${provider.url}/v1/?api-version=2026-01`,
      apiKey: undefined,
      timeoutMs: 5_000,
    });
    const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "hi" }] };
    expect(await upstream.postJson("/chat/completions", body)).toHaveProperty("choices");
    const started = await upstream.startStream("/chat/completions", { ...body, stream: true });
    await new Response(writeEventStream(started.body)).text();
    expect(seen).toEqual(["/v1/chat/completions?api-version=2026-01", "/v1/chat/completions?api-version=2026-01"]);
  });

  it("cuts off a whole answer larger than the cap, as a protocol failure, and closes its connection", async () => {
    const sockets: Socket[] = [];
    provider.server.on("request", (request: IncomingMessage) => sockets.push(request.socket));
    const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "[paysvc-dev-long] go on" }] };
    const capped = new OpenAiUpstream({
      baseUrl: `${provider.url}/v1`,
      apiKey: undefined,
      timeoutMs: 5_000,
      maxAnswerBytes: 200,
    });
    const refused = await capped.postJson("/chat/completions", body).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused).toMatchObject({ failure: "protocol", message: "upstream answer is larger than 200 bytes" });
    await waitFor(async () => sockets[0]!.destroyed, { timeoutMs: 2_000, what: "the upstream connection to close" });
    const whole = new OpenAiUpstream({ baseUrl: `${provider.url}/v1`, apiKey: undefined, timeoutMs: 5_000 });
    expect(await whole.postJson("/chat/completions", body)).toHaveProperty("choices");
  });
});

describe("the /health probe", () => {
  it("is down when the provider refuses the key or fails, and up when it answers, even without /models", async () => {
    let status = 200;
    const provider = createServer((_request, response) => response.writeHead(status).end());
    await new Promise<void>((resolve) => provider.listen(0, "127.0.0.1", resolve));
    const { port } = provider.address() as AddressInfo;
    const upstream = new OpenAiUpstream({ baseUrl: `http://127.0.0.1:${port}/v1`, apiKey: "wrong", timeoutMs: 5_000 });
    try {
      const outcome = async (answer: number) => {
        status = answer;
        return upstream.probe(2_000).then(
          () => "up",
          (error: Error) => error.message,
        );
      };
      expect(await outcome(200)).toBe("up");
      expect(await outcome(404)).toBe("up");
      expect(await outcome(401)).toBe("upstream answered 401");
      expect(await outcome(403)).toBe("upstream answered 403");
      expect(await outcome(503)).toBe("upstream answered 503");
    } finally {
      provider.close();
    }
  });
});

describe("a provider's error body", () => {
  it("stays in the log: the error callers see names a request id, not the provider's words", async () => {
    const server = createServer((request, response) => {
      request.resume();
      response
        .writeHead(500, { "content-type": "application/json" })
        .end(
          JSON.stringify({ error: { message: "organization org-7Hq2Secret over quota for project proj_internal" } }),
        );
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const upstream = new OpenAiUpstream({
        baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
        apiKey: "sk-test",
        timeoutMs: 5_000,
      });
      const failures = await Promise.all([
        upstream.postJson("/chat/completions", { model: "m" }).catch((error: unknown) => error),
        upstream.startStream("/chat/completions", { model: "m", stream: true }).catch((error: unknown) => error),
      ]);
      for (const failure of failures) {
        expect(failure).toBeInstanceOf(UpstreamError);
        expect((failure as UpstreamError).status).toBe(500);
        expect((failure as Error).message).toMatch(/^upstream answered 500 \(request id req_[0-9a-f]{16}; /);
        expect((failure as Error).message).not.toMatch(/org-7Hq2Secret|proj_internal|quota/);
      }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe("the caller's headers a native Messages call forwards", () => {
  it("reach the provider where the route's own headers do not name them, and the version defaults", async () => {
    const seen: IncomingMessage["headers"][] = [];
    const server = createServer((request, response) => {
      seen.push(request.headers);
      request.resume();
      response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ type: "message" }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    const forwarded = { "anthropic-beta": "claude-code-20250219,context-1m", "anthropic-version": "2024-10-22" };
    try {
      const plain = new OpenAiUpstream({ baseUrl, apiKey: "sk-ant", timeoutMs: 5_000 });
      const configured = new OpenAiUpstream({
        baseUrl,
        apiKey: "sk-ant",
        timeoutMs: 5_000,
        headers: { "Anthropic-Version": "2023-06-01", "anthropic-beta": "route-beta" },
      });
      await plain.postJson("/messages", { model: "m" }, undefined, forwarded);
      await configured.postJson("/messages", { model: "m" }, undefined, forwarded);
      await plain.postJson("/messages", { model: "m" });
      expect(seen.map((headers) => [headers["anthropic-version"], headers["anthropic-beta"]])).toEqual([
        ["2024-10-22", "claude-code-20250219,context-1m"],
        ["2023-06-01", "route-beta"],
        ["2023-06-01", undefined],
      ]);
      expect(seen.map((headers) => headers["x-api-key"])).toEqual(["sk-ant", "sk-ant", "sk-ant"]);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
