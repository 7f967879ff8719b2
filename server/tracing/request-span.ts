import type { IncomingMessage } from "node:http";
import { context, createContextKey, SpanKind, SpanStatusCode, trace, type Span } from "@opentelemetry/api";
import { failedSpan } from "./spans";
import { activeTracer, callerContext } from "./tracing";

const REQUEST = createContextKey("paysvc request span");

/** What a paid call came to, as billing learns it: stated on the request's span and on the provider call's. */
interface CallNotes {
  /** The sold model and the output cap it was quoted for. */
  model?: string;
  maxTokens?: number;
  inputTokens?: number;
  outputTokens?: number;
  /** What the answer says it cost (USD, as the body states it). */
  cost?: string;
}

/**
 * One request's server span (HTTP semantic conventions), continuing a caller's `traceparent`, current while the
 * request is answered; ended when its answer is out (a stream's last byte). The provider call that served it is
 * ended with it, when its tokens and cost are known.
 */
export class RequestSpan {
  private readonly notes: CallNotes = {};
  private served: { span: Span; endedAt?: number } | undefined;

  constructor(
    readonly span: Span,
    /** The endpoint's path: what the GenAI operation is named from. */
    readonly route: string | undefined,
  ) {}

  note(notes: CallNotes): void {
    Object.assign(this.notes, notes);
  }

  /** The call's notes so far (the quoted model and cap, for the provider call's span). */
  get quoted(): Readonly<CallNotes> {
    return this.notes;
  }

  /** Keeps the provider call that served the request open until its usage is known (`endedAt`: when it answered). */
  adoptServed(span: Span, endedAt?: number): void {
    this.served = { span, endedAt };
  }

  answered(status: number): void {
    this.span.setAttribute("http.response.status_code", status);
    if (status >= 500) this.span.setStatus({ code: SpanStatusCode.ERROR });
  }

  failed(error: unknown): void {
    failedSpan(this.span, error);
  }

  end(): void {
    const { inputTokens, outputTokens, cost, model } = this.notes;
    const usage = {
      ...(inputTokens !== undefined && { "gen_ai.usage.input_tokens": inputTokens }),
      ...(outputTokens !== undefined && { "gen_ai.usage.output_tokens": outputTokens }),
      ...(cost !== undefined && { "paysvc.cost": cost }),
    };
    if (this.served) {
      this.served.span.setAttributes(usage);
      this.served.span.end(this.served.endedAt);
    }
    this.span.setAttributes({ ...usage, ...(model !== undefined && { "paysvc.model": model }) });
    this.span.end();
  }
}

/**
 * Serves a request inside its server span when tracing is on (`serve` is given the span to report its answer to);
 * as it is otherwise.
 */
export function inRequestSpan(
  request: IncomingMessage,
  route: string | undefined,
  serve: (span: RequestSpan | undefined) => Promise<void>,
): Promise<void> {
  const tracer = activeTracer();
  if (!tracer) return serve(undefined);
  const method = request.method ?? "GET";
  const headers = request.headers;
  const parent = callerContext({ get: (name) => (headers[name] as string | undefined) ?? null });
  const [path, query] = (request.url ?? "/").split("?", 2);
  const span = tracer.startSpan(
    route ? `${method} ${route}` : method,
    {
      kind: SpanKind.SERVER,
      attributes: {
        "http.request.method": method,
        "url.path": path,
        "url.scheme": "http",
        ...(route && { "http.route": route }),
        // The query's names only: a value may be a key.
        ...(query && { "url.query": query.replace(/=[^&]*/g, "=REDACTED") }),
        ...(headers["user-agent"] && { "user_agent.original": headers["user-agent"] }),
        ...(request.socket.remoteAddress && { "network.peer.address": request.socket.remoteAddress }),
      },
    },
    parent,
  );
  const state = new RequestSpan(span, route);
  return context.with(trace.setSpan(parent, span).setValue(REQUEST, state), () => serve(state));
}

/** The current request's span, while tracing is on. */
export function currentRequest(): RequestSpan | undefined {
  if (!activeTracer()) return undefined;
  return context.active().getValue(REQUEST) as RequestSpan | undefined;
}

/** Notes what the current call came to on its request's span (nothing when tracing is off). */
export function noteCall(notes: CallNotes): void {
  currentRequest()?.note(notes);
}
