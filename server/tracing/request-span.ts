import type { IncomingMessage } from "node:http";
import { CallTrace } from "./call-trace";
import { SpanKind } from "./span";
import { remoteParent } from "./trace-ids";
import { activeTracer } from "./tracing";

/**
 * Serves a request inside its server span (HTTP semantic conventions) when tracing is on, continuing a caller's
 * `traceparent`; `serve` is given the request's record, which its handlers reach through the request, and ends it
 * once the answer is out. As it is otherwise.
 */
export function inRequestSpan(
  request: IncomingMessage,
  route: string | undefined,
  serve: (call: CallTrace | undefined) => Promise<void>,
): Promise<void> {
  const tracer = activeTracer();
  if (!tracer) return serve(undefined);
  const method = request.method ?? "GET";
  const { headers } = request;
  const url = request.url ?? "/";
  const mark = url.indexOf("?");
  const attributes: Record<string, string> = {
    "http.request.method": method,
    "url.path": mark < 0 ? url : url.slice(0, mark),
    "url.scheme": "http",
  };
  if (route) attributes["http.route"] = route;
  // The query's names only: a value may be a key.
  if (mark >= 0) attributes["url.query"] = url.slice(mark + 1).replace(/=[^&]*/g, "=REDACTED");
  if (headers["user-agent"]) attributes["user_agent.original"] = headers["user-agent"];
  if (request.socket.remoteAddress) attributes["network.peer.address"] = request.socket.remoteAddress;
  const parent = remoteParent(headers.traceparent, headers.tracestate);
  const span = tracer.start(route ? `${method} ${route}` : method, SpanKind.SERVER, attributes, parent);
  return serve(new CallTrace(span, route));
}
