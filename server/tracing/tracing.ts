import type { TracingSettings } from "../../config/tracing";
import { SERVICE_VERSION } from "../../config/version";
import { OtlpExporter } from "./otlp-exporter";
import { samplerOf, type Sampler } from "./sampler";
import { Span, SpanKind, type Attributes, type SpanParent } from "./span";
import { newSpanId, newTraceId } from "./trace-ids";

/** Starts spans: each gets its sampling decision, and a recorded one its way to the exporter. */
class Tracer {
  constructor(
    private readonly sampler: Sampler,
    private readonly exporter: OtlpExporter,
  ) {}

  /** A span continuing `parent` (a new trace without one). */
  start(name: string, kind: SpanKind, attributes: Attributes, parent: SpanParent | undefined): Span {
    const traceId = parent?.traceId ?? newTraceId();
    const sink = this.sampler(traceId, parent) ? this.exporter : undefined;
    return new Span(name, kind, traceId, newSpanId(), parent?.spanId, parent?.traceState, sink, attributes, parent);
  }

  flush(): Promise<void> {
    return this.exporter.flush();
  }
}

/**
 * The process's tracer while tracing is on (OTEL_* settings name an exporter), else undefined: every span helper
 * then runs its work as it is, allocating nothing, so that tracing off costs nothing measurable.
 */
let tracer: Tracer | undefined;

/**
 * Starts exporting spans as `settings` say (once per process): OTLP over HTTP as JSON, batched (otlp-exporter.ts);
 * W3C trace context read from callers and sent on. A span's parent is passed to it, never looked up: no context
 * is carried across awaits (AsyncLocalStorage's hooks on every promise would cost more than the spans).
 */
export function startTracing(settings: TracingSettings | undefined): void {
  if (!settings || tracer) return;
  const resource = {
    ...settings.resource,
    "service.name": settings.serviceName,
    "service.version": SERVICE_VERSION,
    "telemetry.sdk.language": "nodejs",
    "telemetry.sdk.name": "paysvc",
    "telemetry.sdk.version": SERVICE_VERSION,
  };
  const exporter = new OtlpExporter(settings, resource, { name: "paysvc", version: SERVICE_VERSION });
  tracer = new Tracer(samplerOf(settings.sampler), exporter);
}

/** Sends the spans still batched (at shutdown). */
export async function stopTracing(): Promise<void> {
  await tracer?.flush();
}

/** The tracer, while tracing is on. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** A child span of `parent` (a new trace without one); undefined with tracing off. */
export function startSpan(
  name: string,
  parent: Span | undefined,
  attributes: Attributes = {},
  kind: SpanKind = SpanKind.INTERNAL,
): Span | undefined {
  return tracer?.start(name, kind, attributes, parent);
}

/**
 * Runs `work` in a child span of `parent`, given to it, ended when the work settles: a failure marks it failed
 * (span.ts). With tracing off, `work` runs as it is and is given no span.
 */
export function inSpan<T>(
  name: string,
  parent: Span | undefined,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const span = startSpan(name, parent, attributes, kind);
  return span ? spanned(span, work) : work(undefined);
}

async function spanned<T>(span: Span, work: (span: Span) => Promise<T>): Promise<T> {
  try {
    return await work(span);
  } catch (error) {
    span.fail(error);
    throw error;
  } finally {
    span.end();
  }
}

/**
 * `headers` with `span`'s W3C trace context added (traceparent, tracestate), for a call made inside it to a
 * provider or a facilitator; the same object without a span.
 */
export function withTraceHeaders<T extends Record<string, string>>(
  headers: T,
  span: Span | undefined,
): T & Record<string, string> {
  if (!span) return headers;
  const carrier: Record<string, string> = { ...headers, traceparent: span.traceparent };
  if (span.traceState) carrier.tracestate = span.traceState;
  return carrier as T;
}
