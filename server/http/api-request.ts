import type { CallTrace } from "../tracing/call-trace";

/**
 * A request as the handlers in server/ read it: the part of a Web `Request` they use (so that a test may pass a
 * Request), which app/serve.mjs builds straight from Node's request without the Request, Headers and body stream
 * a Web Request costs (see node-http-adapter.ts), plus the address of the socket it came from.
 */
export interface ApiRequest {
  readonly method: string;
  /** Absolute: the server's origin, the path and the query. */
  readonly url: string;
  readonly headers: { get(name: string): string | null };
  /** The body as it arrives; null without a body, or when the server has read it already (`bodyBytes`). */
  readonly body: ReadableStream<Uint8Array> | null;
  /** The whole body, when the server read it before the handler ran. */
  readonly bodyBytes?: Uint8Array;
  /** The address of the socket the request came from (the free tier counts by it); unknown to a Web Request. */
  readonly peerAddress?: string;
  /** Its server span and what billing notes of it, while tracing is on: its phases' and calls' spans' parent. */
  readonly trace?: CallTrace;
}
