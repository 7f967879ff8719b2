import OpenAI from "openai";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { wrapFetchWithPayment } from "@x402/fetch";
import { decimalToAtomic } from "../server/core/money";
import { buyPrepaidCode, payingOpenAI, postJson, quote, stack, uptoPaymentClient } from "./support/payments";
import { requestFrom } from "./support/request-from";

const TOKEN = "metrics-token-0123456789abcdef";
const MODEL = "vendor-a/gpt-6-luna";
const CHAT = "/v1/chat/completions";
const payer = () => stack().payers[5]!;

/**
 * Each counter's and gauge's value by its name and sorted labels (`name{"a":"1","b":"2"}`), and each histogram's
 * observation count as `<name>_count{...}`. The parser flattens a histogram's label sets together, so the counts
 * are read from the histogram's `_count` lines, parsed again as a counter family.
 */
function samples(text: string): Map<string, number> {
  const families = parsePrometheusTextFormat(text);
  const histograms = families.filter((family) => family.type === "HISTOGRAM").map((family) => family.name);
  const counts = histograms.flatMap((name) => [
    `# TYPE ${name}_count counter`,
    ...text.split("\n").filter((line) => line.startsWith(`${name}_count{`)),
  ]);
  const values = new Map<string, number>();
  for (const family of [...families, ...parsePrometheusTextFormat(counts.join("\n"))]) {
    expect(family.help === "" && !family.name.endsWith("_count")).toBe(false);
    if (family.type === "HISTOGRAM") continue;
    for (const sample of family.metrics) {
      const { network, ...labels } = sample.labels ?? {};
      expect(network).toBe("eip155:137");
      values.set(
        `${family.name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort()))}`,
        Number(sample.value),
      );
    }
  }
  return values;
}

describe("GET /metrics", () => {
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  beforeAll(async () => {
    // A process of its own, so that only this file's requests move its counters.
    app = await startExtraApp({ METRICS_TOKEN: TOKEN, TRUSTED_PROXIES: "127.0.0.2" });
  });
  afterAll(async () => {
    await app?.stop();
  });

  const scrape = async () => {
    const response = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    return samples(await response.text());
  };
  const chatBody = (content: string) => ({ model: MODEL, messages: [{ role: "user", content }], max_tokens: 20 });

  it("answers only the configured bearer token, and is absent where none is configured", async () => {
    const without = await fetch(`${app.url}/metrics`);
    expect(without.status).toBe(401);
    expect(without.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
    expect((await without.json()).error.code).toBe("invalid_api_key");
    const wrong = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const unconfigured = await fetch(`${stack().appUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(unconfigured.status).toBe(404);
    expect((await unconfigured.json()).error.code).toBe("not_found");
    const openapi = await (await fetch(`${stack().appUrl}/openapi.json`)).json();
    expect(Object.keys(openapi.paths)).not.toContain("/metrics");
  });

  it("parses as Prometheus text, and its counters move by exactly the requests made", async () => {
    const before = await scrape();
    // A quote; a paid chat through the official SDK and x402 client; a bad request; a call that fails upstream.
    const required = await quote(CHAT, chatBody("metrics paid"), app.url);
    const amount = BigInt(required.accepts[0]!.amount);
    await payingOpenAI(payer().privateKey, `${app.url}/v1`).chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "metrics paid" }],
      max_tokens: 20,
    });
    expect((await postJson(CHAT, { model: MODEL, messages: [] }, {}, app.url)).status).toBe(400);
    const failing = payingOpenAI(payer().privateKey, `${app.url}/v1`).chat.completions.create({
      model: MODEL,
      messages: [{ role: "user", content: "[paysvc-dev-fault:http-error]" }],
      max_tokens: 20,
    });
    await expect(failing).rejects.toMatchObject({ status: 502 });
    // A prepaid key bought here, then one call billed to it.
    const { code } = await buyPrepaidCode(
      payer().privateKey,
      { model: MODEL, tokens: 100_000 },
      "/prepaid/codes",
      app.url,
    );
    const prepaid = await new OpenAI({ apiKey: code, baseURL: `${app.url}/v1`, maxRetries: 0 }).chat.completions.create(
      chatBody("metrics prepaid") as OpenAI.ChatCompletionCreateParamsNonStreaming,
    );
    const charged = prepaid.usage!.prompt_tokens + prepaid.usage!.completion_tokens;
    // Free chat from one caller behind the trusted proxy: 10 served, the 11th refused.
    const caller = { "x-forwarded-for": "198.51.100.77" };
    for (let index = 0; index < 11; index++) {
      const body = { messages: [{ role: "user", content: `free ${index}` }], max_tokens: 5 };
      const answer = await requestFrom("127.0.0.2", "POST", "/v1/free/chat/completions", {
        body,
        headers: caller,
        base: app.url,
      });
      expect(answer.status).toBe(index < 10 ? 200 : 429);
    }

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string> = {}) => {
      const key = `${name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort()))}`;
      return (after.get(key) ?? 0) - (before.get(key) ?? 0);
    };
    const requests = (endpoint: string, outcome: string) => moved("paysvc_requests_total", { endpoint, outcome });
    // The SDK's paid calls each get a 402 first, then pay: quoted 3 times (one by hand), paid once.
    expect(requests(CHAT, "quoted")).toBe(3);
    expect(requests(CHAT, "paid")).toBe(1);
    expect(requests(CHAT, "invalid")).toBe(1);
    expect(requests(CHAT, "upstream_failed")).toBe(1);
    expect(requests(CHAT, "prepaid")).toBe(1);
    expect(requests("/prepaid/codes", "quoted")).toBe(1);
    expect(requests("/prepaid/codes", "paid")).toBe(1);
    expect(requests("/v1/free/chat/completions", "served")).toBe(10);
    expect(requests("/v1/free/chat/completions", "refused")).toBe(1);
    expect(requests("/metrics", "served")).toBe(1); // the first scrape
    expect(moved("paysvc_revenue_atomic_total", { endpoint: CHAT, model: MODEL })).toBe(Number(amount));
    expect(moved("paysvc_revenue_atomic_total", { endpoint: "/prepaid/codes", model: MODEL })).toBeGreaterThan(0);
    expect(moved("paysvc_prepaid_tokens_total", { model: MODEL, kind: "charged" })).toBe(charged);
    expect(moved("paysvc_prepaid_tokens_total", { model: MODEL, kind: "reserved" })).toBeGreaterThanOrEqual(charged);
    expect(moved("paysvc_free_tier_refusals_total")).toBe(1);
    expect(moved("paysvc_upstream_errors_total", { endpoint: CHAT })).toBe(1);
    expect(moved("paysvc_facilitator_errors_total", { operation: "settle" })).toBe(0);
    // Histograms: one observation per phase of each paid call that finished (the x402 chat and the key's purchase).
    expect(moved("paysvc_request_phase_seconds_count", { payment: "x402", phase: "settle" })).toBe(2);
    expect(moved("paysvc_request_phase_seconds_count", { payment: "x402", phase: "total" })).toBe(2);
    expect(moved("paysvc_request_phase_seconds_count", { payment: "prepaid", phase: "reserve" })).toBe(1);
    // The event loop's delay, sampled every 100 ms between the two scrapes.
    expect(after.get("nodejs_eventloop_lag_p99_seconds{}")).toBeGreaterThan(0);
  });

  it("counts upto revenue at what was settled: a whole answer's at once, a stream's when its usage settles it", async () => {
    const before = await scrape();
    const openai = new OpenAI({
      apiKey: "x402-no-key-needed",
      baseURL: `${app.url}/v1`,
      fetch: wrapFetchWithPayment(fetch, uptoPaymentClient(payer().privateKey)),
      maxRetries: 0,
    });
    const whole = await openai.chat.completions.create({ ...chatBody("metrics upto"), max_tokens: 2000 } as never);
    const chunks: { usage?: { cost?: string } }[] = [];
    const stream = openai.chat.completions.stream({
      ...chatBody("metrics upto stream"),
      max_tokens: 2000,
      stream: true,
      stream_options: { include_usage: true },
    } as never);
    stream.on("chunk", (chunk) => chunks.push(chunk as never));
    await stream.finalChatCompletion();
    const costs = [(whole.usage as unknown as { cost: string }).cost, chunks.at(-1)!.usage!.cost!];

    const after = await scrape();
    const moved = (name: string, labels: Record<string, string>) => {
      const key = `${name}${JSON.stringify(Object.fromEntries(Object.entries(labels).sort()))}`;
      return (after.get(key) ?? 0) - (before.get(key) ?? 0);
    };
    expect(moved("paysvc_requests_total", { endpoint: CHAT, outcome: "paid" })).toBe(2);
    const settled = costs.reduce((sum, cost) => sum + decimalToAtomic(cost, 6), 0n);
    expect(moved("paysvc_revenue_atomic_total", { endpoint: CHAT, model: MODEL })).toBe(Number(settled));
  });
});
