import { context, SpanKind, trace, type Span } from "@opentelemetry/api";
import { currentRequest } from "./request-span";
import { failedSpan } from "./spans";
import { activeTracer } from "./tracing";

/** One call to a provider's route, in a client span named and attributed by the GenAI semantic conventions. */
export interface ProviderAttempt {
  /** Runs the call with this span current, so that its request carries the span's traceparent. */
  run<T>(call: () => Promise<T>): Promise<T>;
  /** The route served: a stream's span lasts until the request's answer is out; a whole answer's ends now. */
  served(value: unknown): void;
  failed(error: unknown): void;
}

/** The GenAI operation of an endpoint's path. */
function operationOf(path: string | undefined): string {
  if (path?.endsWith("/embeddings")) return "embeddings";
  if (path?.includes("/images/")) return "generate_content";
  return "chat";
}

/**
 * A provider attempt's span, a child of the request's (undefined with tracing off): the operation, the provider, the
 * model asked for and the output cap quoted; the tokens and cost are set when the request ends (request-span.ts).
 * Each route tried is one attempt: a failover shows as two.
 */
export function providerAttempt(
  route: { provider: string; model: string },
  index: number,
): ProviderAttempt | undefined {
  const tracer = activeTracer();
  if (!tracer) return undefined;
  const request = currentRequest();
  const operation = operationOf(request?.route);
  const { maxTokens } = request?.quoted ?? {};
  const span: Span = tracer.startSpan(`${operation} ${route.model}`, {
    kind: SpanKind.CLIENT,
    attributes: {
      "gen_ai.operation.name": operation,
      "gen_ai.provider.name": route.provider,
      "gen_ai.request.model": route.model,
      ...(maxTokens !== undefined && { "gen_ai.request.max_tokens": maxTokens }),
      "paysvc.route": `${route.provider}/${route.model}`,
      "paysvc.route.index": index,
    },
  });
  return {
    run: (call) => context.with(trace.setSpan(context.active(), span), call),
    served(value) {
      const streams = (value as { body?: unknown } | null)?.body instanceof ReadableStream;
      if (request) request.adoptServed(span, streams ? undefined : Date.now());
      else span.end();
    },
    failed(error) {
      failedSpan(span, error);
      span.end();
    },
  };
}

/** The model the provider says answered, on the current provider attempt's span. */
export function noteResponseModel(model: unknown): void {
  if (!activeTracer() || typeof model !== "string") return;
  trace.getActiveSpan()?.setAttribute("gen_ai.response.model", model);
}
