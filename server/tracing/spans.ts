import { SpanKind, SpanStatusCode, type Attributes, type Span } from "@opentelemetry/api";
import { activeTracer } from "./tracing";

/**
 * Runs `work` in a child span of the current one, named `name`, ended when the work settles: a failure marks it an
 * error with its type (never its message, which may carry what spans must not). With tracing off, `work` runs as it
 * is and is given no span.
 */
export function inSpan<T>(
  name: string,
  attributes: Attributes,
  work: (span: Span | undefined) => Promise<T>,
  kind: SpanKind = SpanKind.INTERNAL,
): Promise<T> {
  const tracer = activeTracer();
  if (!tracer) return work(undefined);
  return tracer.startActiveSpan(name, { kind, attributes }, async (span) => {
    try {
      return await work(span);
    } catch (error) {
      failedSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Marks a span failed by `error`: its status and `error.type` (the error's code or class), never its message. */
export function failedSpan(span: Span, error: unknown): void {
  const code = (error as { code?: unknown }).code;
  const type = typeof code === "string" ? code : ((error as Error)?.constructor?.name ?? "Error");
  span.setAttribute("error.type", type);
  span.setStatus({ code: SpanStatusCode.ERROR });
}

/** A child span of the current one, for a phase that is not one async function; undefined with tracing off. */
export function startSpan(name: string, attributes: Attributes = {}): Span | undefined {
  return activeTracer()?.startSpan(name, { attributes });
}
