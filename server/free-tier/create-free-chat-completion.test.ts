import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { IncomingMessage } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadServiceConfig } from "../../config/service-config";
import { freeChat } from "../../config/free-tier";
import { createAppContext, type AppContext } from "../context/app-context";
import { answerErrors } from "../http/answer-errors";
import type { JsonHttpServer } from "../../cli/lib/json-http-server";
import { startLocalUpstream } from "../../cli/dev-stack/local-upstream";
import { createFreeChatCompletion, freeChatQuota } from "./create-free-chat-completion";
import { freeChatRequests } from "./free-chat-request";

describe("free chat against the development provider", () => {
  let provider: JsonHttpServer;
  let context: AppContext;
  let directory: string;
  let upstreamCalls = 0;
  beforeAll(async () => {
    provider = await startLocalUpstream({ port: 0, faultDirectives: true });
    provider.server.on("request", (request: IncomingMessage) => {
      if (request.url?.endsWith("/chat/completions")) upstreamCalls++;
    });
    directory = mkdtempSync(join(tmpdir(), "paysvc-free-chat-"));
    context = await createAppContext(
      loadServiceConfig({
        PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
        FACILITATOR_URL: "http://127.0.0.1:9",
        UPSTREAM_BASE_URL: `${provider.url}/v1`,
        DATABASE_URL: `file:${join(directory, "free-chat.sqlite")}`,
      }),
      [],
    );
  });
  afterAll(async () => {
    await context.storage.close();
    rmSync(directory, { recursive: true, force: true });
    await provider.stop();
  });

  const handler = answerErrors((request) =>
    createFreeChatCompletion(context, request, freeChatRequests(context.config.catalog.freeChat.id).parse),
  );
  const post = async (caller: string, body: unknown) => {
    const answer = await handler(
      // A request from the socket address `caller`, as app/serve.mjs builds them.
      Object.assign(
        new Request("http://service.test/v1/free/chat/completions", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: typeof body === "string" ? body : JSON.stringify(body),
        }),
        { peerAddress: caller },
      ),
    );
    return { ...answer, json: () => JSON.parse(answer.body as string) };
  };
  const used = async (caller: string) => {
    const answer = await freeChatQuota(
      context,
      Object.assign(new Request("http://service.test/"), { peerAddress: caller }),
    );
    return (JSON.parse(answer.body as string) as { per10Min: { used: number } }).per10Min.used;
  };
  const ask = (content: string, extra: Record<string, unknown> = {}) => ({
    messages: [{ role: "user", content }],
    ...extra,
  });

  it("holds max_completion_tokens to the free cap: the provider honours it before max_tokens", async () => {
    const answer = await post("198.51.100.1", ask("[paysvc-dev-long] go on", { max_completion_tokens: 100_000 }));
    expect(answer.status).toBe(200);
    expect(answer.headers["x-max-tokens-lowered-from"]).toBe("100000");
    expect(answer.json().usage.completion_tokens).toBe(freeChat.maxTokens);
    const both = await post(
      "198.51.100.1",
      ask("[paysvc-dev-long] go on", { max_tokens: 10, max_completion_tokens: 3000 }),
    );
    expect(both.json().usage.completion_tokens).toBe(freeChat.maxTokens);
    const small = await post("198.51.100.1", ask("[paysvc-dev-long] go on", { max_completion_tokens: 7 }));
    expect(small.json().usage.completion_tokens).toBe(7);
    expect(small.headers["x-max-tokens-lowered-from"]).toBeUndefined();
  });

  it("answers 502 for a provider's 200 that carries an error, and does not count it", async () => {
    const before = await used("198.51.100.9");
    const answer = await post("198.51.100.9", ask("[paysvc-dev-fault:error-in-200]"));
    expect(answer.status).toBe(502);
    expect(answer.json().error.message).toMatch(/answered 200 with an error/);
    expect(await used("198.51.100.9")).toBe(before);
  });

  it("refuses n other than 1, and fields of the wrong type, with a 400 naming the field; none is counted or sent", async () => {
    const caller = "198.51.100.2";
    const callsBefore = upstreamCalls;
    for (const [extra, param] of [
      [{ n: 3 }, "n"],
      [{ n: 0 }, "n"],
      [{ temperature: "hot" }, "temperature"],
      [{ temperature: 2.5 }, "temperature"],
      [{ max_completion_tokens: "lots" }, "max_completion_tokens"],
      [{ max_completion_tokens: 0 }, "max_completion_tokens"],
      [{ top_p: 1.5 }, "top_p"],
      [{ stop: ["a", "b", "c", "d", "e"] }, "stop"],
      [{ presence_penalty: -3 }, "presence_penalty"],
      [{ seed: 1.5 }, "seed"],
      [{ response_format: { type: "xml" } }, "response_format.type"],
      [{ tools: [{ type: "function", function: { name: "two words" } }] }, "tools[0].function.name"],
      [{ tool_choice: "sometimes" }, "tool_choice"],
      [{ stream_options: { include_usage: "yes" } }, "stream_options.include_usage"],
      [{ messages: [{ role: "wizard", content: "hi" }] }, "messages[0].role"],
    ] as const) {
      const answer = await post(caller, ask("hello", extra));
      expect(answer.status, JSON.stringify(extra)).toBe(400);
      expect(answer.json().error).toMatchObject({ type: "invalid_request_error", param });
    }
    expect(upstreamCalls).toBe(callsBefore);
    expect(await used(caller)).toBe(0);
    const one = await post(caller, ask("hello", { n: 1, temperature: 0.2, top_p: 0.9, stop: "\n\n", seed: 7 }));
    expect(one.status).toBe(200);
    expect(one.json().choices).toHaveLength(1);
  });

  it("refuses input over the free limit, counting the input like a quote, before the quota is touched", async () => {
    const caller = "198.51.100.3";
    // "harbor " is one token; the message framing adds a handful more.
    const over = await post(caller, ask("harbor ".repeat(freeChat.maxInputTokens)));
    expect(over.status).toBe(400);
    expect(over.json().error).toMatchObject({ code: "context_length_exceeded", param: "messages" });
    expect(over.json().error.message).toContain(String(freeChat.maxInputTokens));
    const tool = {
      type: "function",
      function: { name: "lookup", description: "harbor ".repeat(freeChat.maxInputTokens) },
    };
    expect((await post(caller, ask("short", { tools: [tool] }))).status).toBe(400);
    expect(await used(caller)).toBe(0);
    const within = await post(caller, ask("harbor ".repeat(freeChat.maxInputTokens - 100)));
    expect(within.status).toBe(200);
    expect(within.json().usage.prompt_tokens).toBeLessThanOrEqual(freeChat.maxInputTokens);
  });

  it("refuses a body far over what the input limit allows before reading it all", async () => {
    const answer = await post("198.51.100.4", ask("x".repeat(freeChat.maxBodyBytes)));
    expect(answer.status).toBe(413);
    expect(await used("198.51.100.4")).toBe(0);
  });
});
