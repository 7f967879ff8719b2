import { SpanKind as OtelSpanKind, SpanStatusCode, TraceFlags } from "@opentelemetry/api";
import { hrTime, hrTimeDuration } from "@opentelemetry/core";
import { JsonTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { describe, expect, it } from "vitest";
import { exportRequestFrame, spanJson } from "./otlp-json";
import { Span, SpanKind, type Attributes } from "./span";
import { newSpanId, newTraceId } from "./trace-ids";

type ReadableSpans = Parameters<typeof JsonTraceSerializer.serializeRequest>[0];

const KINDS = {
  [SpanKind.INTERNAL]: OtelSpanKind.INTERNAL,
  [SpanKind.SERVER]: OtelSpanKind.SERVER,
  [SpanKind.CLIENT]: OtelSpanKind.CLIENT,
};
const RESOURCE: Attributes = {
  "service.name": "paysvc-test",
  "service.version": "1.2.3",
  "deployment.environment": "ci",
};
const SCOPE = { name: "paysvc", version: "1.2.3" };
const SDK_RESOURCE = resourceFromAttributes(RESOURCE);

/** The same span as the official SDK hands its exporter: times from the same `performance.now()` readings. */
function asSdkSpan(span: Span): ReadableSpans[number] {
  const startTime = hrTime(span.startedAt);
  const endTime = hrTime(span.endedAt);
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED, traceState: undefined };
  return {
    name: span.name,
    kind: KINDS[span.kind],
    spanContext: () => context,
    parentSpanContext: span.parentSpanId
      ? {
          traceId: span.traceId,
          spanId: span.parentSpanId,
          traceFlags: TraceFlags.SAMPLED,
          isRemote: span.remoteParent,
        }
      : undefined,
    startTime,
    endTime,
    duration: hrTimeDuration(startTime, endTime),
    status: { code: span.failed ? SpanStatusCode.ERROR : SpanStatusCode.UNSET },
    attributes: { ...span.attributes },
    links: [],
    events: [],
    ended: true,
    resource: SDK_RESOURCE,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as unknown as ReadableSpans[number];
}

/** A document with the fields protobuf's JSON may leave out when they hold their defaults taken out. */
function withoutDefaults(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutDefaults);
  if (typeof value !== "object" || value === null) return value;
  const entries = Object.entries(value).filter(
    ([, field]) => field !== 0 && field !== undefined && !(Array.isArray(field) && field.length === 0),
  );
  return Object.fromEntries(entries.map(([key, field]) => [key, withoutDefaults(field)]));
}

const sink = { push: () => undefined };
const sink2 = { push: () => undefined };

function ended(span: Span): Span {
  span.end();
  return span;
}

describe("spans written as OTLP/JSON", () => {
  it("are what the official SDK's serializer writes for the same spans", () => {
    const traceId = newTraceId();
    // The server span continues a caller's: its parent is remote.
    const caller = { traceId, spanId: newSpanId(), sampled: true, traceState: undefined };
    const attributes = {
      "http.request.method": "POST",
      "url.path": "/v1/chat/completions",
      "http.response.status_code": 200,
      "user_agent.original": 'quote " backslash \\ newline \n tab \t U+2028 \u2028 emoji 🦊 nul \u0000',
      "paysvc.cost": "0.000123",
    };
    const server = new Span(
      "POST /v1/chat/completions",
      SpanKind.SERVER,
      traceId,
      newSpanId(),
      caller.spanId,
      undefined,
      sink,
      attributes,
      caller,
    );
    expect(server.remoteParent).toBe(true);
    const failed = new Span(
      "paysvc.settle",
      SpanKind.INTERNAL,
      traceId,
      newSpanId(),
      server.spanId,
      undefined,
      sink2,
      {
        "x402.success": false,
        "x402.amount": "1000",
        ratio: 0.25,
        negative: -7,
        "x402.valid": true,
      },
      server,
    );
    failed.fail(Object.assign(new Error("the secret message"), { code: "facilitator_unavailable" }));
    const client = new Span("chat luna", SpanKind.CLIENT, traceId, newSpanId(), server.spanId, undefined, sink, {
      "gen_ai.operation.name": "chat",
      "gen_ai.request.max_tokens": 16,
    });
    const spans = [ended(failed), ended(client), ended(server)];
    const { head, tail } = exportRequestFrame(RESOURCE, SCOPE);
    const ours = JSON.parse(`${head}${spans.map(spanJson).join(",")}${tail}`) as unknown;
    const official = JSON.parse(
      new TextDecoder().decode(JsonTraceSerializer.serializeRequest(spans.map(asSdkSpan))),
    ) as unknown;
    expect(withoutDefaults(ours)).toEqual(withoutDefaults(official));
    expect(JSON.stringify(ours)).not.toContain("the secret message");
  });

  it("writes the values JSON has no number for as protobuf's JSON does", () => {
    const span = ended(new Span("x", SpanKind.INTERNAL, newTraceId(), newSpanId(), undefined, undefined, sink, {}));
    span.attributes.nan = Number.NaN;
    span.attributes.infinite = Number.POSITIVE_INFINITY;
    const { attributes } = JSON.parse(spanJson(span)) as { attributes: { value: unknown }[] };
    expect(attributes.map(({ value }) => value)).toEqual([{ doubleValue: "NaN" }, { doubleValue: "Infinity" }]);
  });

  it("carries the caller's tracestate on the spans that continue its trace", () => {
    const span = new Span(
      "GET /v1/models",
      SpanKind.SERVER,
      newTraceId(),
      newSpanId(),
      newSpanId(),
      "vendor=a,other=b",
      sink,
      {},
    );
    expect(JSON.parse(spanJson(ended(span)))).toMatchObject({ traceState: "vendor=a,other=b" });
  });
});
