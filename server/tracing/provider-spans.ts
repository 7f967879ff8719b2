import type { CallTrace } from "./call-trace";
import { SpanKind, type Span } from "./span";
import { startSpan } from "./tracing";

/** One call to a provider's route, in a client span named and attributed by the GenAI semantic conventions. */
export interface ProviderAttempt {
  readonly span: Span;
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
 * A provider attempt's span, a child of the request's (undefined with tracing off or outside a traced request): the
 * operation, the provider, the model asked for and the output cap quoted; the tokens and cost are set when the
 * request ends (call-trace.ts). Each route tried is one attempt: a failover shows as two.
 */
export function providerAttempt(
  call: CallTrace | undefined,
  route: { provider: string; model: string },
  index: number,
): ProviderAttempt | undefined {
  if (!call) return undefined;
  const operation = operationOf(call.route);
  const attributes: Record<string, string | number> = {
    "gen_ai.operation.name": operation,
    "gen_ai.provider.name": route.provider,
    "gen_ai.request.model": route.model,
    "paysvc.route": `${route.provider}/${route.model}`,
    "paysvc.route.index": index,
  };
  const { maxTokens } = call.quoted;
  if (maxTokens !== undefined) attributes["gen_ai.request.max_tokens"] = maxTokens;
  const span = startSpan(`${operation} ${route.model}`, call.span, attributes, SpanKind.CLIENT);
  if (!span) return undefined;
  return {
    span,
    served(value) {
      const streams = (value as { body?: unknown } | null)?.body instanceof ReadableStream;
      call.adoptServed(span, streams ? undefined : performance.now());
    },
    failed(error) {
      span.fail(error);
      span.end();
    },
  };
}
