import type { ApiError } from "../core/errors";
import { writeEventStream, type EventStream } from "./event-stream";

/**
 * What a handler answers: app/serve.mjs writes it to Node's response (node-http-adapter.ts), a whole body in one
 * write with its length. Header names are lower case, so that a header is never sent twice; each answer owns
 * its headers object (never a shared one), which the CORS layer adds to in place (cors.ts).
 */
export interface ApiAnswer {
  status: number;
  headers: Record<string, string>;
  /** A whole body (JSON, a document), or an event stream passed on as it arrives. */
  body: string | ReadableStream<Uint8Array>;
  /**
   * Bookkeeping the caller need not wait for (the ledger's record of a settled payment), run once a whole body has
   * been handed to the socket. It must not throw.
   */
  afterSent?: () => void;
}

/** The provider that served a model's answer, by its catalog name: what an operator looks for first. */
export const PROVIDER_HEADER = "x-paysvc-provider";

function lowerCased(headers: Record<string, string> | undefined): Record<string, string> {
  const result: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) result[name.toLowerCase()] = value;
  return result;
}

/** A JSON answer (200 unless told). */
export function jsonAnswer(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): ApiAnswer {
  return textAnswer(JSON.stringify(body), "application/json", init);
}

/** A whole text body of the given content type (200 unless told). */
export function textAnswer(
  text: string,
  contentType: string,
  init: { status?: number; headers?: Record<string, string> } = {},
): ApiAnswer {
  const headers = lowerCased(init.headers);
  headers["content-type"] = contentType;
  return { status: init.status ?? 200, headers, body: text };
}

/** An error's answer: its status, OpenAI's error object and its headers. */
export function errorAnswer(error: ApiError): ApiAnswer {
  return jsonAnswer(error.body(), { status: error.status, headers: error.headers });
}

/**
 * A server-sent event stream, its events written out as they come (event-stream.ts). `X-Accel-Buffering: no` keeps
 * proxies such as nginx from holding events back; the app itself never compresses or buffers (next.config.ts turns
 * compression off).
 */
export function eventStreamAnswer(events: EventStream, headers: Record<string, string>): ApiAnswer {
  return {
    status: 200,
    headers: {
      ...lowerCased(headers),
      "content-type": "text/event-stream; charset=utf-8",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    },
    body: writeEventStream(events),
  };
}
