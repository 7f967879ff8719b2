import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { encodePng } from "../cli/dev-stack/png";
import { runCodex } from "./support/coding-agents";
import { startExtraApp } from "./support/extra-app";
import { balances, buyPrepaidCode, payingOpenAI, quote, stack, type PrepaidCode } from "./support/payments";

/**
 * Codex CLI (`codex exec`, the devDependency) spends a prepaid key through the Responses API: against a model whose
 * route speaks chat (its request translated) and one whose route speaks Responses natively (passed through). Either
 * way it answers, and the key is charged exactly the usage Codex reports.
 */

const MODEL = "vendor-a/gpt-6-luna";
const PROMPT = "Say hello.";
const CHAT_MODEL = "acme/codex-chat-1";
const UNKNOWN_TO_CODEX = { native: "m1", chat: "m2" };
const payer = () => stack().payers[6]!;
const directory = mkdtempSync(join(tmpdir(), "paysvc-codex-e2e-"));
let upstream: LocalUpstream;
let nativeApp: Awaited<ReturnType<typeof startExtraApp>>;

beforeAll(async () => {
  upstream = await startLocalUpstream({ port: 0 });
  const catalog = join(directory, "catalog.json");
  const route = { provider: "native", base_url: `${upstream.url}/v1`, model: "luna-responses-2026", api: "responses" };
  const prices = { input_per_1m: "0.07", output_per_1m: "0.35" };
  // Names Codex has no metadata for, so that it sends its other request shape (top-level tools, web_search too).
  const model = { id: MODEL, kind: "chat", prices, aliases: [UNKNOWN_TO_CODEX.native], routes: [route] };
  const chatRoute = { provider: "chat", base_url: `${upstream.url}/v1`, model: "chat-model-2026" };
  const chatModel = { id: CHAT_MODEL, kind: "chat", prices, aliases: [UNKNOWN_TO_CODEX.chat], routes: [chatRoute] };
  writeFileSync(catalog, JSON.stringify({ extends: "default", models: [model, chatModel] }));
  nativeApp = await startExtraApp({ PAYSVC_CATALOG: catalog });
});

afterAll(async () => {
  await nativeApp?.stop();
  await upstream?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function used(key: PrepaidCode): Promise<number> {
  const response = await fetch(`${key.api_base}/prepaid/status`, { headers: { authorization: `Bearer ${key.code}` } });
  return ((await response.json()) as { tokens: { used: number } }).tokens.used;
}

/**
 * Codex with a fresh 1,000,000-token key for `model` bought at `base`, configured with `name` (the model or an alias
 * of it): it answers, and the key is charged what it reports.
 */
async function codexOnKey(base: string, model = MODEL, name = model, images?: Buffer[]) {
  const key = await buyPrepaidCode(payer().privateKey, { model, tokens: 1_000_000 }, "/prepaid/codes", base);
  const run = await runCodex({ baseUrl: key.api_base, apiKey: key.code, model: name, prompt: PROMPT, images });
  expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  expect(run.failure).toBeUndefined();
  // The provider echoes the start of the last user turn: Codex puts an attached image's name first.
  expect(run.answer).toContain(images ? "Local development reply to" : `Local development reply to "${PROMPT}"`);
  expect(run.usage!.input_tokens).toBeGreaterThan(1000);
  expect(run.usage!.output_tokens).toBeGreaterThan(0);
  expect(await used(key)).toBe(run.usage!.input_tokens + run.usage!.output_tokens);
  return run;
}

describe("Codex CLI with a prepaid key", () => {
  it("answers through a chat route (its request translated), the key charged the usage it reports", async () => {
    await codexOnKey(stack().appUrl);
  });

  it("answers a prompt with an image attached (-i), the image priced in what the key is charged", async () => {
    const text = await codexOnKey(stack().appUrl);
    const run = await codexOnKey(stack().appUrl, MODEL, MODEL, [encodePng(1024, 1024, (x) => [x % 256, 30, 60])]);
    // The same prompt and tools, and the image's 765 tokens (OpenAI's tiles: the default catalog's).
    expect(run.usage!.input_tokens - text.usage!.input_tokens).toBeGreaterThanOrEqual(765);
  });

  it("answers through a route that speaks Responses natively, sent the request as it came", async () => {
    const before = upstream.responsesRequestsReceived.length;
    await codexOnKey(nativeApp.url);
    const received = upstream.responsesRequestsReceived.slice(before);
    expect(received).toHaveLength(1);
    const { body } = received[0]!;
    // Passed through: Codex's own fields reach the provider, under the provider's model id, output capped.
    expect(body).toMatchObject({
      model: "luna-responses-2026",
      stream: true,
      reasoning: { effort: "medium" },
      include: ["reasoning.encrypted_content"],
      store: false,
      text: { verbosity: "low" },
      prompt_cache_key: expect.any(String),
      max_output_tokens: expect.any(Number),
    });
    expect((body.input as { type?: string }[])[0]!.type).toBe("additional_tools");
    expect(upstream.chatRequestsReceived).toHaveLength(0);
  });

  it("answers in the shape it sends for a model it does not know, natively: hosted tools not passed on", async () => {
    const before = upstream.responsesRequestsReceived.length;
    await codexOnKey(nativeApp.url, MODEL, UNKNOWN_TO_CODEX.native);
    const { body } = upstream.responsesRequestsReceived[before]!;
    const types = (body.tools as { type: string }[]).map((tool) => tool.type);
    expect(types).toContain("namespace");
    expect(types).not.toContain("web_search");
    expect(body.reasoning).toMatchObject({ summary: "auto" });
  });

  it("answers in the shape it sends for a model it does not know, translated to chat", async () => {
    const before = upstream.chatRequestsReceived.length;
    await codexOnKey(nativeApp.url, CHAT_MODEL, UNKNOWN_TO_CODEX.chat);
    expect(upstream.chatRequestsReceived.slice(before).map((request) => request.model)).toEqual(["chat-model-2026"]);
  });
});

describe("a Codex-shaped Responses call paid with x402 through the official openai SDK", () => {
  it("is accepted with Codex's fields and paid exactly its quote, on a chat route and a native one", async () => {
    const body = {
      model: MODEL,
      input: [
        {
          type: "message" as const,
          role: "developer" as const,
          content: [{ type: "input_text" as const, text: "Be brief." }],
        },
        {
          type: "message" as const,
          role: "user" as const,
          content: [{ type: "input_text" as const, text: "Name a river" }],
        },
      ],
      reasoning: { effort: "low" as const, summary: "auto" as const },
      include: ["reasoning.encrypted_content" as const],
      store: false,
      text: { verbosity: "low" as const },
      prompt_cache_key: "codex-like-session",
      parallel_tool_calls: false,
      tool_choice: "auto" as const,
      tools: [{ type: "custom" as const, name: "exec", description: "Run code" }, { type: "web_search" as const }],
      max_output_tokens: 300,
    };
    for (const url of [stack().appUrl, nativeApp.url]) {
      const price = BigInt((await quote("/v1/responses", body, url)).accepts[0]!.amount);
      const before = await balances(payer().address);
      const response = await payingOpenAI(payer().privateKey, `${url}/v1`).responses.create(body);
      expect(response.status).toBe("completed");
      expect(response.model).toBe(MODEL);
      expect(response.output_text).toContain("Name a river");
      // The native route's own Response passed on (its ids are the development provider's, 32 hex digits).
      expect(response.id).toMatch(url === nativeApp.url ? /^resp_[0-9a-f]{32}$/ : /^resp_[0-9a-f]{48}$/);
      expect(response.usage).toMatchObject({ cost: expect.any(String) });
      expect(before.payer - (await balances(payer().address)).payer).toBe(price);
    }
    // The native route was not sent the hosted tool, which is billed per search.
    const sent = upstream.responsesRequestsReceived.at(-1)!.body;
    expect(sent.tools).toEqual([{ type: "custom", name: "exec", description: "Run code" }]);
    expect(sent.max_output_tokens).toBe(300);
  });
});
