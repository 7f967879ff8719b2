import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver } from "../../e2e/support/otlp-receiver";
import { Span, SpanKind } from "../tracing/span";
import { newSpanId, newTraceId } from "../tracing/trace-ids";
import { startSpan, startTracing, stopTracing } from "../tracing/tracing";
import { phase, type Timings } from "./phase";

describe("a phase of a call", () => {
  it("answers work that answers at once at once, timed", () => {
    const timings: Timings = {};
    const answer = phase(timings, "quote", () => 42);
    expect(answer).toBe(42);
    expect(timings.quote).toBeGreaterThanOrEqual(0);
  });

  it("times work that waits until it settles, failed or not, and passes its failure on", async () => {
    const timings: Timings = {};
    const waited = await phase(timings, "verify", async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return "valid";
    });
    expect(waited).toBe("valid");
    expect(timings.verify).toBeGreaterThanOrEqual(15);
    const failing = phase(timings, "settle", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      throw new Error("facilitator away");
    });
    await expect(failing).rejects.toThrow("facilitator away");
    expect(timings.settle).toBeGreaterThanOrEqual(5);
    expect(() =>
      phase(timings, "reserve", () => {
        throw new Error("at once");
      }),
    ).toThrow("at once");
    expect(timings.reserve).toBeGreaterThanOrEqual(0);
  });
});

describe("a phase of a traced call", () => {
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    startTracing({
      url: `${receiver.url}/v1/traces`,
      headers: {},
      serviceName: "paysvc-phase-test",
      resource: {},
      sampler: { kind: "parentbased_always_on", ratio: 1 },
      batchDelayMs: 10,
    });
  });
  afterAll(async () => {
    await stopTracing();
    await receiver.stop();
  });

  it("is a span paysvc.<name>, a child of the request's, given to the work and marked failed by what it throws", async () => {
    const request = startSpan("POST /v1/chat/completions", undefined, {}, SpanKind.SERVER)!;
    const timings: Timings = {};
    let given: Span | undefined;
    await phase(timings, "verify", async (span) => ((given = span), "valid"), {
      parent: request,
      attributes: { "paysvc.model": "vendor-a/gpt-6-luna" },
    });
    const failing = phase(
      timings,
      "settle",
      () => Promise.reject(Object.assign(new Error("secret"), { code: "gone" })),
      {
        parent: request,
      },
    );
    await expect(failing).rejects.toThrow("secret");
    // Without a parent (work outside a traced request, or the work phase whose spans are its providers'): none.
    phase(timings, "upstream", () => 1);
    request.end();
    await stopTracing();
    await expect.poll(() => receiver.spans.filter((span) => span.traceId === request.traceId).length).toBe(3);
    const spans = receiver.spans.filter((span) => span.traceId === request.traceId);
    const verify = spans.find((span) => span.name === "paysvc.verify")!;
    const settle = spans.find((span) => span.name === "paysvc.settle")!;
    expect(given?.spanId).toBe(verify.spanId);
    expect(verify).toMatchObject({
      parentSpanId: request.spanId,
      attributes: { "paysvc.model": "vendor-a/gpt-6-luna" },
    });
    expect(settle).toMatchObject({
      parentSpanId: request.spanId,
      status: { code: 2 },
      attributes: { "error.type": "gone" },
    });
    expect(receiver.exported()).not.toContain("secret");
    expect(spans.map((span) => span.name)).not.toContain("paysvc.upstream");
  });

  it("continues a caller's span, which is not sampled when the caller's is not", () => {
    const caller = { traceId: newTraceId(), spanId: newSpanId(), sampled: false, traceState: undefined };
    const span = new Span(
      "x",
      SpanKind.SERVER,
      caller.traceId,
      newSpanId(),
      caller.spanId,
      undefined,
      undefined,
      {},
      caller,
    );
    expect(span.traceparent).toBe(`00-${caller.traceId}-${span.spanId}-00`);
    const child = startSpan("paysvc.quote", span)!;
    expect(child.sampled).toBe(false);
    expect(child.traceparent).toMatch(new RegExp(`^00-${caller.traceId}-[0-9a-f]{16}-00$`));
  });
});
