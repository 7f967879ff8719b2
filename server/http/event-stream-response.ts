/**
 * A server-sent event stream response. `X-Accel-Buffering: no` keeps proxies such as nginx from holding events
 * back; the app itself never compresses or buffers (next.config.ts turns compression off).
 */
export function eventStreamResponse(body: ReadableStream<Uint8Array>, headers: Record<string, string>): Response {
  return new Response(body, {
    status: 200,
    headers: {
      ...headers,
      "Content-Type": "text/event-stream; charset=utf-8",
      Connection: "keep-alive",
      "X-Accel-Buffering": "no",
    },
  });
}
