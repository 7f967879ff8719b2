import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { freePort } from "../cli/dev-stack/next-app";
import { SINGLE_FACILITATOR } from "../config/facilitators";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { startOtlpReceiver, type ReceivedSpan } from "./support/otlp-receiver";
import { buyPrepaidCode, payingOpenAI, stack } from "./support/payments";

const luna = "vendor-a/gpt-6-luna";
const directory = mkdtempSync(join(tmpdir(), "paysvc-tracing-e2e-"));
/** The caller's trace: its id, and the span it calls from. */
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN = "00f067aa0ba902b7";
const traceparent = (traceId = TRACE_ID) => `00-${traceId}-${CALLER_SPAN}-01`;
const SECRET_PROMPT = "the prompt is nobody's business 7c1e";

let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
let provider: LocalUpstream;
let facilitator: Awaited<ReturnType<typeof startFacilitatorProxy>>;
let app: Awaited<ReturnType<typeof startExtraApp>>;
const logLines: string[] = [];
const payer = () => stack().payers[5]!;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  provider = await startLocalUpstream({ port: 0 });
  facilitator = await startFacilitatorProxy(stack().facilitatorUrl);
  // Luna's first route is a provider that is not there: every call fails over to the second, in two attempts.
  const catalog = join(directory, "catalog.json");
  const closedPort = await freePort();
  writeFileSync(
    catalog,
    JSON.stringify({
      extends: "default",
      models: [
        {
          id: luna,
          kind: "chat",
          prices: { input_per_1m: "0.07", output_per_1m: "0.35" },
          routes: [
            { provider: "gone", base_url: `http://127.0.0.1:${closedPort}/v1`, model: "luna-gone" },
            { provider: "local", base_url: `${provider.url}/v1`, model: "luna-local-2026" },
          ],
        },
      ],
    }),
  );
  app = await startExtraApp(
    {
      PAYSVC_CATALOG: catalog,
      FACILITATOR_URL: facilitator.url,
      PROVIDER_FAILURE_THRESHOLD: "1000",
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
      OTEL_SERVICE_NAME: "paysvc-e2e",
      OTEL_BSP_SCHEDULE_DELAY: "100",
    },
    { onLogLine: (line) => logLines.push(line) },
  );
});

afterAll(async () => {
  await app?.stop();
  await facilitator?.stop();
  await provider?.stop();
  await receiver?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** The spans of one trace once its server span has arrived (spans are exported in batches). */
async function traceOf(traceId: string, wanted: (spans: ReceivedSpan[]) => boolean): Promise<ReceivedSpan[]> {
  const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
  await expect.poll(() => wanted(spans()), { timeout: 15_000, interval: 100 }).toBe(true);
  return spans();
}

const named = (spans: ReceivedSpan[], name: string) => spans.filter((span) => span.name === name);

describe("OpenTelemetry traces, to an OTLP collector", () => {
  it("traces a prepaid call from the caller's traceparent: quote, reservation and both provider attempts", async () => {
    const key = await buyPrepaidCode(payer().privateKey, { model: luna, tokens: 100_000 }, "/prepaid/codes", app.url);
    const openai = new OpenAI({
      apiKey: key.code,
      baseURL: `${app.url}/v1`,
      maxRetries: 0,
      defaultHeaders: { traceparent: traceparent() },
    });
    const answer = await openai.chat.completions.create({
      model: luna,
      messages: [{ role: "user", content: SECRET_PROMPT }],
      max_tokens: 64,
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: { completion_tokens: number; cost?: string } | undefined;
    for await (const chunk of answer) usage = (chunk.usage as typeof usage) ?? usage;

    const spans = await traceOf(TRACE_ID, (all) => named(all, "POST /v1/chat/completions").length === 1);
    const [server] = named(spans, "POST /v1/chat/completions");
    // The caller's trace continues: the server span's parent is the caller's span.
    expect(server!.parentSpanId).toBe(CALLER_SPAN);
    expect(server!.kind).toBe(2); // SERVER
    expect(server!.attributes).toMatchObject({
      "http.request.method": "POST",
      "http.route": "/v1/chat/completions",
      "http.response.status_code": 200,
      "paysvc.model": luna,
    });
    expect(server!.resource["service.name"]).toBe("paysvc-e2e");
    const children = (name: string) => named(spans, name).filter((span) => span.parentSpanId === server!.spanId);
    expect(children("paysvc.quote")).toHaveLength(1);
    expect(children("paysvc.reserve")[0]?.attributes["paysvc.prepaid.reserved"]).toBe(true);

    // A failover is two attempts: the provider that is not there, failed, then the one that served.
    const attempts = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(attempts.map((span) => span.name)).toEqual(["chat luna-gone", "chat luna-local-2026"]);
    const [failed, served] = attempts;
    expect(failed!.status?.code).toBe(2); // ERROR
    expect(failed!.attributes["error.type"]).toBeDefined();
    expect(served!.kind).toBe(3); // CLIENT
    expect(served!.attributes).toMatchObject({
      "gen_ai.provider.name": "local",
      "gen_ai.request.model": "luna-local-2026",
      "gen_ai.request.max_tokens": 64,
      "gen_ai.usage.output_tokens": usage!.completion_tokens,
      "paysvc.route": "local/luna-local-2026",
      "paysvc.route.index": 1,
      "paysvc.cost": usage!.cost,
    });
    expect(served!.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    // The stream's attempt lasts until its last byte, within the request's span.
    expect(BigInt(served!.endTimeUnixNano)).toBeLessThanOrEqual(BigInt(server!.endTimeUnixNano));

    // The provider was sent the trace, naming the attempt that called it.
    const sent = provider.chatRequestsReceived.at(-1)!.headers.traceparent;
    expect(sent).toBe(`00-${TRACE_ID}-${served!.spanId}-01`);

    // No prompt, answer, key or credential is exported.
    const exported = receiver.exported();
    expect(exported).not.toContain(SECRET_PROMPT);
    expect(exported).not.toContain(key.code);
    expect(exported).not.toContain(key.code.slice(-12));
  });

  it("traces a paid stream in one trace: quote, verify, both attempts, settle with its transaction, log lines", async () => {
    const traceId = "0af7651916cd43dd8448eb211c80319c";
    const openai = payingOpenAI(payer().privateKey, `${app.url}/v1`);
    const stream = await openai.chat.completions.create(
      {
        model: luna,
        messages: [{ role: "user", content: SECRET_PROMPT }],
        max_tokens: 64,
        stream: true,
        stream_options: { include_usage: true },
      },
      { headers: { traceparent: traceparent(traceId) } },
    );
    type PaidUsage = { completion_tokens: number; cost: string; cost_details: { transaction: string } };
    let usage: PaidUsage | undefined;
    for await (const chunk of stream) usage = (chunk.usage as PaidUsage | undefined) ?? usage;
    const transaction = usage!.cost_details.transaction;
    expect(transaction).toMatch(/^0x[0-9a-f]{64}$/);

    const spans = await traceOf(traceId, (all) => named(all, "x402.settle").length === 1);
    // The quote (402) and the paid request are two server spans of the caller's trace, both its children.
    const servers = named(spans, "POST /v1/chat/completions");
    expect(servers.map((span) => span.parentSpanId)).toEqual([CALLER_SPAN, CALLER_SPAN]);
    expect(servers.map((span) => span.attributes["http.response.status_code"]).sort()).toEqual([200, 402]);
    expect(named(spans, "paysvc.quote")).toHaveLength(2);
    const [verify] = named(spans, "x402.verify");
    const [settle] = named(spans, "x402.settle");
    const terms = { "x402.scheme": "exact", "x402.network": "eip155:137", "paysvc.facilitator": SINGLE_FACILITATOR };
    expect(verify!.attributes).toMatchObject({ ...terms, "x402.valid": true });
    expect(settle!.attributes).toMatchObject({ ...terms, "x402.success": true, "x402.transaction": transaction });
    expect(settle!.attributes["x402.amount"]).toMatch(/^\d+$/);
    // Each facilitator call is inside its phase's span, the phase's whole time (failover included).
    const [verifying] = named(spans, "paysvc.verify");
    const [settling] = named(spans, "paysvc.settle");
    expect(verify!.parentSpanId).toBe(verifying!.spanId);
    expect(settle!.parentSpanId).toBe(settling!.spanId);
    const attempts = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
    expect(attempts.map((span) => span.name)).toEqual(["chat luna-gone", "chat luna-local-2026"]);
    // The first failed (status ERROR), the second served (status unset).
    expect(attempts.map((span) => span.status?.code ?? 0)).toEqual([2, 0]);
    expect(attempts[1]!.attributes).toMatchObject({
      "gen_ai.usage.output_tokens": usage!.completion_tokens,
      "paysvc.cost": usage!.cost,
    });
    // The provider and the facilitator were sent the trace, naming the span that called each.
    expect(provider.chatRequestsReceived.at(-1)!.headers.traceparent).toBe(`00-${traceId}-${attempts[1]!.spanId}-01`);
    expect(facilitator.traceparents).toContain(`00-${traceId}-${verify!.spanId}-01`);
    expect(facilitator.traceparents).toContain(`00-${traceId}-${settle!.spanId}-01`);
    // No prompt and no signature (65 bytes of hex) is exported.
    expect(receiver.exported()).not.toContain(SECRET_PROMPT);
    expect(receiver.exported()).not.toMatch(/0x[0-9a-f]{130}/i);

    // The request's log line names its trace.
    await expect
      .poll(() => logLines.some((line) => line.includes('"paid_request"') && line.includes(traceId)))
      .toBe(true);
  });

  it("starts a trace of its own for a caller that sends none, and serves free endpoints in spans too", async () => {
    const before = receiver.spans.length;
    const models = await fetch(`${app.url}/v1/models`);
    expect(models.status).toBe(200);
    await expect
      .poll(() => receiver.spans.slice(before).some((span) => span.name === "GET /v1/models"), { timeout: 15_000 })
      .toBe(true);
    const span = receiver.spans.slice(before).find((candidate) => candidate.name === "GET /v1/models")!;
    expect(span.parentSpanId ?? "").toBe("");
    expect(span.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(span.attributes["http.response.status_code"]).toBe(200);
  });
});
