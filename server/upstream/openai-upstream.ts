import { MAX_UPSTREAM_ANSWER_BYTES } from "../../config/limits";
import { EventSplitter, isErrorObject, SseEvent, type EventStream } from "../http/event-stream";
import { providerRefusal, UpstreamError } from "./upstream-error";
import { upstreamFetch, upstreamWhole, type UpstreamAnswer, type UpstreamInit } from "./upstream-fetch";

/** The Messages API version a native Anthropic route is called with (the one Claude Code and the SDK send). */
const ANTHROPIC_VERSION = "2023-06-01";

export interface UpstreamConfig {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
  /** Largest whole answer read; MAX_UPSTREAM_ANSWER_BYTES unless told. */
  maxAnswerBytes?: number;
  /** Extra request headers the provider wants (an organisation, an API version). */
  headers?: Readonly<Record<string, string>>;
}

/** A streamed answer whose first event has arrived: proof the upstream accepted the work. */
export interface StartedStream {
  /** The events received so far (at least one with data), then the rest as the upstream sends them, parsed once. */
  body: EventStream;
  /** Abandons the upstream request (used when the payment cannot be settled). */
  cancel(): Promise<void>;
}

/**
 * An OpenAI-compatible provider: configuration plus small typed calls. Only the fields the gateway relies on
 * are checked; the rest passes through.
 */
export class OpenAiUpstream {
  /** The base URL taken apart once: parsing it took 0.015 ms of every call. */
  private readonly base: { origin: string; path: string; search: string };

  constructor(private readonly config: UpstreamConfig) {
    const { origin, pathname, search } = new URL(config.baseUrl);
    this.base = { origin, path: pathname.replace(/\/+$/, ""), search };
  }

  /** Where `path` (e.g. `/chat/completions`) is: under the base URL's path, with its query (an API version). */
  private target(path: string): { origin: string; path: string } {
    return { origin: this.base.origin, path: `${this.base.path}${path}${this.base.search}` };
  }

  private url(path: string): string {
    const target = this.target(path);
    return `${target.origin}${target.path}`;
  }

  /**
   * The route's headers, then those the call forwards (`forwarded`: a native Messages call's `anthropic-beta` and
   * `anthropic-version`, the attempt's trace context) where the route's do not name them; the key as Bearer; to
   * Anthropic's Messages API (`/messages`, a route that speaks it natively) as `x-api-key`, with the
   * `anthropic-version` it requires unless the route's headers or the caller's name one.
   */
  private headers(
    contentType?: string,
    path?: string,
    forwarded?: Readonly<Record<string, string>>,
  ): Record<string, string> {
    const headers: Record<string, string> = { ...this.config.headers, accept: "application/json" };
    if (contentType) headers["content-type"] = contentType;
    const named = (wanted: string) => Object.keys(headers).some((name) => name.toLowerCase() === wanted);
    for (const [name, value] of Object.entries(forwarded ?? {})) {
      if (!named(name.toLowerCase())) headers[name] = value;
    }
    const messages = path === "/messages";
    if (messages && !named("anthropic-version")) headers["anthropic-version"] = ANTHROPIC_VERSION;
    if (this.config.apiKey) {
      if (messages) headers["x-api-key"] = this.config.apiKey;
      else headers.authorization = `Bearer ${this.config.apiKey}`;
    }
    return headers;
  }

  /** A POST of JSON, or of a multipart form (its content type, with the boundary, is written by the encoder). */
  private postInit(
    body: unknown,
    path: string,
    forwarded?: Readonly<Record<string, string>>,
  ): Omit<UpstreamInit, "signal"> {
    const form = body instanceof FormData;
    return {
      method: "POST",
      headers: this.headers(form ? undefined : "application/json", path, forwarded),
      body: form ? body : JSON.stringify(body),
    };
  }

  /** POSTs and returns the streamed answer once its status is known to be a success. */
  private async postForStream(
    path: string,
    body: unknown,
    signal: AbortSignal,
    forwarded: Readonly<Record<string, string>> | undefined,
  ): Promise<UpstreamAnswer> {
    let response: UpstreamAnswer;
    try {
      response = await upstreamFetch(this.url(path), { ...this.postInit(body, path, forwarded), signal });
    } catch (error) {
      throw this.describe(error, signal);
    }
    if (!isSuccess(response.status)) {
      const text = await response.text().catch(() => "");
      throw providerRefusal(`upstream answered ${response.status}`, text, this.base.origin, response.status);
    }
    return response;
  }

  private describe(error: unknown, signal?: AbortSignal): UpstreamError {
    if (error instanceof UpstreamError) return error;
    if (signal?.aborted)
      return new UpstreamError("timeout", `upstream did not answer within ${this.config.timeoutMs} ms`);
    const cause =
      (error as { code?: string; cause?: { code?: string } }).cause?.code ?? (error as { code?: string }).code;
    // The error's own words name the provider's address; callers get its kind only.
    return new UpstreamError("network", `upstream unreachable (${cause ?? "network error"})`);
  }

  /**
   * A complete JSON answer of `path` (e.g. `/chat/completions`) to a JSON body or a multipart form; `signal` abandons
   * the call (its payment was refused); `forwarded`, the caller's headers it is sent with (see `headers`).
   */
  async postJson(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    forwarded?: Readonly<Record<string, string>>,
  ): Promise<Record<string, unknown>> {
    let answer: { status: number; body: Buffer };
    try {
      answer = await upstreamWhole(this.target(path), {
        ...this.postInit(body, path, forwarded),
        signal,
        timeoutMs: this.config.timeoutMs,
        maxBytes: this.config.maxAnswerBytes ?? MAX_UPSTREAM_ANSWER_BYTES,
      });
    } catch (error) {
      throw this.describe(error);
    }
    const text = answer.body.toString("utf8");
    if (!isSuccess(answer.status)) {
      throw providerRefusal(`upstream answered ${answer.status}`, text, this.base.origin, answer.status);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new UpstreamError("protocol", "upstream answered with a body that is not JSON");
    }
    if (typeof parsed !== "object" || parsed === null) {
      throw new UpstreamError("protocol", "upstream answered with a JSON value that is not an object");
    }
    return parsed as Record<string, unknown>;
  }

  /**
   * Starts a server-sent event stream and waits for its first complete event (the timeout covers only that
   * wait). Later failures end the stream with an error event, since the status line has then been sent. `signal`
   * abandons the call while it waits (its payment was refused); `forwarded`, the caller's headers it is sent with.
   */
  async startStream(
    path: string,
    body: unknown,
    signal?: AbortSignal,
    forwarded?: Readonly<Record<string, string>>,
  ): Promise<StartedStream> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.config.timeoutMs);
    const refused = () => controller.abort(signal?.reason);
    signal?.addEventListener("abort", refused, { once: true });
    if (signal?.aborted) refused();
    let response: UpstreamAnswer | undefined;
    let chunks: AsyncIterator<Buffer, undefined> | undefined;
    const splitter = new EventSplitter();
    /** The events a read completed (all that are left, at the end); an event too long is a protocol failure. */
    const split = (done: boolean | undefined, value: Buffer | undefined): SseEvent[] => {
      try {
        return done || !value ? splitter.end() : splitter.push(value);
      } catch (error) {
        throw new UpstreamError("protocol", (error as Error).message);
      }
    };
    const received: SseEvent[] = [];
    try {
      response = await this.postForStream(path, body, controller.signal, forwarded);
      chunks = response.chunks();
      // The first event with data, not a comment (`: PROCESSING`, which some providers send while they wait):
      // only data shows that the model started.
      let first: SseEvent | undefined;
      while (first === undefined) {
        const { done, value } = await chunks.next();
        const events = split(done, value);
        received.push(...events);
        first = events.find((event) => event.data !== undefined);
        if (done && first === undefined) {
          throw new UpstreamError("protocol", "upstream stream ended before its first event");
        }
      }
      const json = first.json();
      if (json !== undefined && isErrorObject(json)) {
        throw providerRefusal("upstream stream began with an error", first.data!, this.base.origin);
      }
    } catch (error) {
      response?.abandon();
      throw this.describe(error, controller.signal);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", refused);
    }
    const upstream = { answer: response, chunks };
    let abandoned = false;
    const abandon = async () => {
      abandoned = true;
      upstream.answer.abandon();
    };
    return {
      // Read straight from the Node stream's iterator: no Web stream in between (Node 20's Readable.toWeb also
      // closes its controller again when the Node stream ends after a cancel, an uncaught exception).
      body: new ReadableStream<SseEvent[]>({
        start(streamController) {
          streamController.enqueue(received);
        },
        async pull(streamController) {
          try {
            for (;;) {
              const { done, value } = await upstream.chunks.next();
              const events = split(done, value);
              if (events.length > 0) streamController.enqueue(events);
              if (done) return streamController.close();
              if (events.length > 0) return;
            }
          } catch (error) {
            // Abandoned: the read fails because the connection was closed, and nobody is left to tell.
            if (abandoned) return;
            streamController.enqueue([streamErrorEvent(error)]);
            streamController.close();
          }
        },
        cancel: abandon,
      }),
      cancel: abandon,
    };
  }

  /** Reachability probe for /health: the model list answers quickly on every OpenAI-compatible provider. */
  async probe(timeoutMs: number): Promise<void> {
    const response = await upstreamFetch(this.url("/models"), {
      method: "GET",
      headers: this.headers(),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.discard();
    // A refused key fails every call as surely as an outage; other 4xx (a provider without /models) answer.
    if (response.status >= 500 || response.status === 401 || response.status === 403) {
      throw new Error(`upstream answered ${response.status}`);
    }
  }
}

const isSuccess = (status: number) => status >= 200 && status <= 299;

function streamErrorEvent(error: unknown): SseEvent {
  const message = `upstream stream failed: ${error instanceof Error ? error.message : String(error)}`;
  return SseEvent.of({ error: { message, type: "upstream_error", param: null, code: "upstream_error" } });
}
