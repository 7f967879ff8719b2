import { decodePaymentResponseHeader } from "@x402/core/http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { balances, chatBody, payingOpenAI, quote, stack } from "./support/payments";
import { requestFrom } from "./support/request-from";

type App = Awaited<ReturnType<typeof startExtraApp>>;

/** Status, the headers a caller reads, and the body of an answer, with the run-dependent parts named. */
async function answerOf(base: string, method: string, path: string, body?: unknown) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const headers = Object.fromEntries(
    ["content-type", "cache-control", "allow", "payment-required", "retry-after"].map((name) => [
      name,
      response.headers.get(name),
    ]),
  );
  // The framework adds its own Vary names (rsc, next-router-*) to every answer; ours must be among them.
  const varyHost = (response.headers.get("vary") ?? "").toLowerCase().split(/,\s*/).includes("host");
  // The documents and the 402 name the origin the caller used, which differs by port alone.
  const origin = (text: string) => text.replaceAll(new URL(base).host, "ORIGIN");
  const encoded = headers["payment-required"];
  if (encoded) headers["payment-required"] = origin(Buffer.from(encoded, "base64").toString("utf8"));
  return { status: response.status, headers: { ...headers, varyHost }, body: origin(await response.text()) };
}

// `next start` serves every endpoint through the one route file; it must answer exactly as app/serve.mjs does.
describe("the framework's own server (next start)", () => {
  let app: App;
  beforeAll(async () => {
    app = await startExtraApp({ TRUSTED_PROXIES: "127.0.0.2" }, { framework: true });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("answers every endpoint, and every refusal, as app/serve.mjs does", async () => {
    const cases: [string, string, unknown?][] = [
      ["GET", "/v1/models"],
      ["GET", "/.well-known/x402"],
      ["GET", "/openapi.json"],
      ["GET", "/llms.txt"],
      ["GET", "/AI-AGENTS.md"],
      ["POST", "/v1/chat/completions", chatBody("Same answer from both servers")],
      ["POST", "/api/v1/chat/completions", chatBody("Same answer from both servers")],
      ["POST", "/v1/responses", { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 16 }],
      ["POST", "/api/v1/images/generations", { model: "gpt-image-2", size: "1024x1024", prompt: "A lighthouse" }],
      ["POST", "/jev", { model: "jev-latest", state: "s", questions: { q: { type: "noul", instructions: "i" } } }],
      ["POST", "/prepaid/codes/auto", undefined],
      ["POST", "/v1/chat/completions", { model: "nope", messages: [] }],
      ["POST", "/v1/embeddings", { model: "only-a-model" }],
      ["GET", "/v1/prepaid/status"],
      ["GET", "/v1/chat/completions"],
      ["OPTIONS", "/v1/chat/completions"],
      ["DELETE", "/health"],
      ["GET", "/v1/no-such-endpoint"],
    ];
    for (const [method, path, body] of cases) {
      const viaServe = await answerOf(stack().appUrl, method, path, body);
      const viaFramework = await answerOf(app.url, method, path, body);
      expect(viaFramework, `${method} ${path}`).toEqual(viaServe);
    }
    const head = await fetch(`${app.url}/health`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("is paid through the official SDK and x402 client, settling exactly the quote", async () => {
    const payer = stack().payers[6]!;
    const body = chatBody("Paid through the route file");
    const price = BigInt((await quote("/v1/chat/completions", body, app.url)).accepts[0]!.amount);
    const before = await balances(payer.address);
    const openai = payingOpenAI(payer.privateKey, `${app.url}/v1`);
    const { data, response } = await openai.chat.completions.create(body as never).withResponse();
    expect(data.choices[0]?.message.content).toContain("Paid through the route file");
    expect(decodePaymentResponseHeader(response.headers.get("payment-response")!).success).toBe(true);
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
  });

  it("counts the free tier by the caller's own address, never by a header the caller sent", async () => {
    const chat = { messages: [{ role: "user", content: "hi" }], max_tokens: 8 };
    const quota = async (address: string) =>
      (await requestFrom(address, "GET", "/v1/free/chat/completions/quota", { base: app.url })).json() as {
        per10Min: { used: number };
      };
    const spoofed = { "x-forwarded-for": "198.51.100.1", "x-paysvc-peer-address": "198.51.100.2" };
    const sent = await requestFrom("127.0.0.71", "POST", "/v1/free/chat/completions", {
      base: app.url,
      body: chat,
      headers: spoofed,
    });
    expect(sent.status).toBe(200);
    expect((await quota("127.0.0.71")).per10Min.used).toBe(1);
    expect((await quota("127.0.0.72")).per10Min.used).toBe(0);
    // A trusted proxy (127.0.0.2) names the caller in X-Forwarded-For.
    await requestFrom("127.0.0.2", "POST", "/v1/free/chat/completions", {
      base: app.url,
      body: chat,
      headers: { "x-forwarded-for": "203.0.113.71" },
    });
    const forwarded = await requestFrom("127.0.0.2", "GET", "/v1/free/chat/completions/quota", {
      base: app.url,
      headers: { "x-forwarded-for": "203.0.113.71" },
    });
    expect((forwarded.json() as { per10Min: { used: number } }).per10Min.used).toBe(1);
  });
});
