import { context, isSpanContextValid, propagation, trace, type Context, type Tracer } from "@opentelemetry/api";
import type { Sampler, TracerProvider } from "@opentelemetry/sdk-trace";
import type { TracingSettings } from "../../config/tracing";
import { SERVICE_VERSION } from "../../config/version";

/**
 * The process's tracer while tracing is on (OTEL_* settings name an exporter), else undefined: every span helper
 * then runs its work as it is, allocating nothing, so that tracing off costs nothing measurable.
 */
let tracer: Tracer | undefined;
let provider: TracerProvider | undefined;

/**
 * Starts exporting spans as `settings` say (once per process): OTLP over HTTP as JSON, batched; the request's
 * context carried across awaits (AsyncLocalStorage); W3C trace context read from callers and sent on. The SDK is
 * loaded only then: a process with tracing off never loads it.
 */
export async function startTracing(settings: TracingSettings | undefined): Promise<void> {
  if (!settings || provider) return;
  const [sdk, { AsyncLocalStorageContextManager }, { W3CTraceContextPropagator }, { OTLPTraceExporter }, resources] =
    await Promise.all([
      import("@opentelemetry/sdk-trace"),
      import("@opentelemetry/context-async-hooks"),
      import("@opentelemetry/core"),
      import("@opentelemetry/exporter-trace-otlp-http"),
      import("@opentelemetry/resources"),
    ]);
  provider = new sdk.TracerProvider({
    resource: resources.resourceFromAttributes({
      ...settings.resource,
      "service.name": settings.serviceName,
      "service.version": SERVICE_VERSION,
    }),
    sampler: samplerOf(sdk, settings.sampler),
    spanProcessors: [
      new sdk.BatchSpanProcessor({
        exporter: new OTLPTraceExporter({ url: settings.url, headers: settings.headers }),
        scheduledDelayMillis: settings.batchDelayMs,
      }),
    ],
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracer = provider.getTracer("paysvc", SERVICE_VERSION);
}

/** Sends the spans still batched (at shutdown). */
export async function stopTracing(): Promise<void> {
  await provider?.shutdown().catch(() => undefined);
}

/** The tracer, while tracing is on. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** The context a caller's `traceparent` (and `tracestate`) names, for the request's span to continue. */
export function callerContext(headers: { get(name: string): string | null }): Context {
  return propagation.extract(context.active(), headers, {
    get: (carrier, key) => carrier.get(key) ?? undefined,
    keys: () => ["traceparent", "tracestate"],
  });
}

/**
 * `headers` with the current span's W3C trace context added (traceparent, tracestate), for a call to a provider or a
 * facilitator; the same object when tracing is off.
 */
export function withTraceHeaders<T extends Record<string, string>>(headers: T): T {
  if (!tracer) return headers;
  const carrier: Record<string, string> = { ...headers };
  propagation.inject(context.active(), carrier);
  return carrier as T;
}

/** The current request's trace id, for its log lines; undefined when tracing is off or no span is current. */
export function currentTraceId(): string | undefined {
  if (!tracer) return undefined;
  const span = trace.getActiveSpan();
  return span && isSpanContextValid(span.spanContext()) ? span.spanContext().traceId : undefined;
}

function samplerOf(sdk: typeof import("@opentelemetry/sdk-trace"), settings: TracingSettings["sampler"]): Sampler {
  const { kind, ratio } = settings;
  const root = kind.endsWith("always_off")
    ? new sdk.AlwaysOffSampler()
    : kind.endsWith("traceidratio")
      ? new sdk.TraceIdRatioBasedSampler(ratio)
      : new sdk.AlwaysOnSampler();
  return kind.startsWith("parentbased_") ? new sdk.ParentBasedSampler({ root }) : root;
}
