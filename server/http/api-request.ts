/**
 * A request as the handlers in server/ read it: the part of a Web `Request` they use, so that a route file passes
 * the framework's Request as it is, and app/serve.mjs builds one straight from Node's request without the
 * Request, Headers and body stream a Web Request costs (see node-http-adapter.ts).
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
}
