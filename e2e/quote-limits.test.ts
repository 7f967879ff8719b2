import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { buyPrepaidCode, chatBody, stack } from "./support/payments";

const METRICS_TOKEN = "quote-limits-metrics-token-0123456789";
const PACK = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
let app: Awaited<ReturnType<typeof startExtraApp>>;

beforeAll(async () => {
  // Callers come through a proxy on this machine, which names them in X-Forwarded-For.
  app = await startExtraApp({ RATE_LIMIT_QUOTE_RPM: "5", TRUSTED_PROXIES: "127.0.0.1", METRICS_TOKEN });
});

afterAll(async () => {
  await app?.stop();
});

/** A chat completion asked without a payment (its answer: the 402 with the price), from `caller`. */
function unpaid(caller: string, path = "/v1/chat/completions", body: unknown = chatBody("what does this cost?")) {
  return fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-forwarded-for": caller },
    body: JSON.stringify(body),
  });
}

describe("unpaid quotes per caller address", () => {
  it("answers a caller's quotes beyond the limit 429 with Retry-After, in the endpoint's dialect", async () => {
    const caller = "2001:db8:5::1";
    for (let index = 0; index < 5; index++) expect((await unpaid(caller)).status).toBe(402);
    const refused = await unpaid(caller);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers.get("x-ratelimit-limit-requests")).toBe("5");
    expect(refused.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const body = (await refused.json()) as { error: { code: string; type: string; message: string } };
    expect(body.error).toMatchObject({ code: "rate_limit_exceeded", type: "rate_limit_error" });
    expect(body.error.message).toMatch(/5 price quotes/);
    // The same /64 is the same caller, whatever the rest of its address; Anthropic's Messages API says it its way.
    const messages = await unpaid("2001:db8:5::ffff", "/v1/messages", {
      model: "vendor-a/gpt-6-luna",
      max_tokens: 64,
      messages: [{ role: "user", content: "and this?" }],
    });
    expect(messages.status).toBe(429);
    expect(await messages.json()).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    // Another /64 is another caller.
    expect((await unpaid("2001:db8:6::1")).status).toBe(402);
  });

  it("never counts a request that pays: a prepaid key of a limited caller is served", async () => {
    const caller = "198.51.100.9";
    for (let index = 0; index < 5; index++) await unpaid(caller);
    expect((await unpaid(caller)).status).toBe(429);
    const key = await buyPrepaidCode(stack().payers[6]!.privateKey, PACK, "/prepaid/codes", app.url);
    const openai = new OpenAI({
      apiKey: key.code,
      baseURL: `${app.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { "x-forwarded-for": caller },
    });
    const answer = await openai.chat.completions.create(chatBody("served") as never);
    expect(answer.choices[0]?.message.content).toBeTruthy();
    const metrics = await (
      await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/paysvc_rate_limit_refusals_total\{[^}]*payer="address"[^}]*limit="requests"[^}]*\} [2-9]/);
  });

  it("counts every request whose payment or key is not granted: junk headers, refused payments, unknown keys", async () => {
    const junkHeader = (caller: string, header: Record<string, string>) =>
      fetch(`${app.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": caller, ...header },
        body: JSON.stringify(chatBody("junk")),
      });
    // A header that does not decode is refused before the body is read, as a quote is.
    const undecodable = "203.0.113.21";
    const statuses: number[] = [];
    for (let index = 0; index < 8; index++) {
      statuses.push((await junkHeader(undecodable, { "payment-signature": "x" })).status);
    }
    expect(statuses).toEqual([402, 402, 402, 402, 402, 429, 429, 429]);
    // A payment that decodes but is refused (here: no x402 payload at all), and an unknown key, count the same.
    const refused = "203.0.113.22";
    const payload = Buffer.from(JSON.stringify({ x402Version: 2, accepted: {}, payload: {} })).toString("base64");
    for (let index = 0; index < 5; index++) {
      expect((await junkHeader(refused, { "payment-signature": payload })).status).toBe(402);
    }
    expect((await junkHeader(refused, { "payment-signature": payload })).status).toBe(429);
    const unknownKey = "203.0.113.23";
    for (let index = 0; index < 5; index++) {
      expect((await junkHeader(unknownKey, { authorization: "Bearer paysvc_pk_unknown0123456789" })).status).toBe(401);
    }
    expect((await junkHeader(unknownKey, { authorization: "Bearer paysvc_pk_unknown0123456789" })).status).toBe(429);
    // Quotes and junk share the caller's count.
    expect((await unpaid(unknownKey)).status).toBe(429);
  });
});
