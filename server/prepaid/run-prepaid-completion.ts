import { PREPAID_USAGE_GRACE_MS } from "../../config/limits";
import type { GptModel } from "../../config/models";
import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { isErrorEvent, SseDataParser } from "../http/sse-data-parser";
import { logEvent } from "../log";
import { countTextTokens } from "../pricing/count-tokens";
import type { PreparedAnswer } from "../payment/paid-request";
import { serverTiming } from "../http/server-timing";
import { UpstreamError } from "../upstream/upstream-error";
import { unknownPrepaidKey } from "./prepaid-code";
import type { PrepaidKeyStore } from "./prepaid-key-store";
import { eventStreamAnswer, jsonAnswer, type ApiAnswer } from "../http/api-answer";

/** How to read the output tokens the upstream reported, from a whole answer or from one stream event. */
export interface OutputTokenReader {
  json: (body: unknown) => number | undefined;
  streamEvent: (data: string) => number | undefined;
  /** The output text one stream event carries, counted when the stream ends without reporting usage. */
  streamText: (data: string) => string;
  /** Events the caller did not ask for (usage requested only for billing): read, then not passed on. */
  hideEvent?: (data: string) => boolean;
}

/**
 * Why a code could not reserve: no such key (401), a key for another model (400), a disabled key, or too few
 * tokens left.
 */
function refusal(store: PrepaidKeyStore, code: string, model: GptModel, inputTokens: number): ApiError {
  const key = store.findByCode(code);
  if (!key) return unknownPrepaidKey();
  if (key.model !== model.id) {
    return new ApiError("invalid_request", `This prepaid key is for ${key.model}; it cannot be used with ${model.id}`, {
      param: "model",
    });
  }
  if (key.status === "disabled") {
    return new ApiError(
      "insufficient_quota",
      "This prepaid key is disabled: its token budget is used up. Buy a new pack.",
    );
  }
  return new ApiError(
    "insufficient_quota",
    `This prepaid key has too few tokens left for this request (${inputTokens} input tokens plus at least 1 output token); buy a new pack`,
  );
}

/**
 * A chat completion or response billed to a prepaid key instead of paid with x402: reserve, call the upstream
 * with the output cap the reservation covers, then charge the input as counted plus the output as reported
 * (never more than reserved) and release the rest. A call that fails before any output releases everything; a
 * stream cut short before it reported its usage is charged for the output it passed on (see meteredStream).
 */
export async function runPrepaidCompletion(
  context: AppContext,
  code: string,
  options: {
    model: GptModel;
    inputTokens: number;
    maxOutputTokens: number;
    work: (maxOutputTokens: number) => Promise<PreparedAnswer>;
    outputTokens: OutputTokenReader;
  },
): Promise<ApiAnswer> {
  const store = context.prepaidKeys;
  const { model, inputTokens, maxOutputTokens } = options;
  const ttlMs = context.config.prepaid.reservationTtlMs;
  let started = performance.now();
  // The usual case is one statement; only a refused reservation looks the key up to say why.
  const reservation = store.reserve(code, model.id, { inputTokens, maxOutputTokens }, ttlMs);
  if (!reservation) throw refusal(store, code, model, inputTokens);
  const timings = { reserve: performance.now() - started, upstream: 0, settle: 0 };
  const charge = (outputTokens: number) =>
    store.settle(reservation, inputTokens + Math.min(outputTokens, reservation.allowedOutput));
  const release = () => store.settle(reservation, 0);

  let answer: PreparedAnswer;
  started = performance.now();
  try {
    answer = await options.work(reservation.allowedOutput);
    timings.upstream = performance.now() - started;
  } catch (error) {
    release();
    if (error instanceof UpstreamError) {
      throw new ApiError("upstream_error", `The model provider failed (${error.message}); no tokens were charged`);
    }
    throw error;
  }

  const headers: Record<string, string> = {
    "Cache-Control": "no-store",
    "X-Prepaid-Max-Tokens": String(reservation.allowedOutput),
  };
  if (reservation.allowedOutput < maxOutputTokens) {
    headers["X-Prepaid-Max-Tokens-Lowered-From"] = String(maxOutputTokens);
  }
  if (answer.kind === "json") {
    // Charged before the answer goes out, not after (which would save the caller about 0.1 ms): a caller that
    // asks for its balance right after, from any process over this database, must see the charge.
    started = performance.now();
    // Without a reported count the whole reservation is charged: the upstream may have produced all of it.
    charge(options.outputTokens.json(answer.body) ?? reservation.allowedOutput);
    timings.settle = performance.now() - started;
    headers["Server-Timing"] = serverTiming(timings);
    return jsonAnswer(answer.body, { status: answer.status ?? 200, headers });
  }
  headers["Server-Timing"] = serverTiming(timings);
  return eventStreamAnswer(
    meteredStream(answer.stream.body, options.outputTokens, {
      charge,
      release,
      extend: () => store.extend(reservation, ttlMs),
      ttlMs,
      allowedOutput: reservation.allowedOutput,
    }),
    headers,
  );
}

/**
 * Runs a charge or release that can no longer change the answer: a failure is logged, and the reservation stops
 * counting when it expires (the call is then not charged).
 */
function settleOrLog(end: () => void): void {
  try {
    end();
  } catch (error) {
    logEvent("error", "prepaid_settle_failed", { error: (error as Error).message });
  }
}

/**
 * Passes a stream through unchanged while reading the output tokens its events report, and keeps the reservation
 * alive meanwhile. When it ends the key is charged the output the upstream reported. Without a report: a stream
 * the upstream completed is charged the whole reservation (it may have produced all of it); one cut short (the
 * upstream broke, or the client left) the output text it passed on, counted as the input is, or nothing when it
 * passed none. A client that leaves once output has begun is answered no more, but the upstream is read for up to
 * PREPAID_USAGE_GRACE_MS more for its report.
 */
function meteredStream(
  source: ReadableStream<Uint8Array>,
  reader: OutputTokenReader,
  budget: {
    charge: (outputTokens: number) => void;
    release: () => void;
    extend: () => void;
    ttlMs: number;
    allowedOutput: number;
  },
): ReadableStream<Uint8Array> {
  const upstream = source.getReader();
  const parser = new SseDataParser();
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let outputTokens: number | undefined;
  let outputText = "";
  let upstreamDone = false;
  let brokeOff = false;
  let clientLeft = false;
  let finished = false;
  const read = (data: string) => {
    outputTokens = reader.streamEvent(data) ?? outputTokens;
    outputText += reader.streamText(data);
    if (isErrorEvent(data)) brokeOff = true;
  };
  const consume = (done: boolean, value: Uint8Array | undefined) => {
    upstreamDone ||= done;
    const events = done ? parser.flush() : parser.push(decoder.decode(value, { stream: true }));
    events.forEach(read);
    return events;
  };
  const heartbeat = setInterval(budget.extend, Math.max(1000, Math.floor(budget.ttlMs / 3)));
  const finish = () => {
    if (finished) return;
    finished = true;
    clearInterval(heartbeat);
    const cutShort = !upstreamDone || brokeOff;
    const output =
      outputTokens ?? (!cutShort ? budget.allowedOutput : outputText === "" ? undefined : countTextTokens(outputText));
    settleOrLog(() => (output === undefined ? budget.release() : budget.charge(output)));
  };
  /** Reads on after the client left, until the usage is reported, the stream ends, or the grace runs out. */
  const readForUsage = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), PREPAID_USAGE_GRACE_MS);
    });
    try {
      while (outputTokens === undefined && !upstreamDone && !brokeOff) {
        const next = await Promise.race([upstream.read(), expired]);
        if (!next) return;
        consume(next.done, next.value);
      }
    } catch {
      // The upstream failed meanwhile: what was read stands.
    } finally {
      clearTimeout(timer);
    }
  };
  // With events to hide, the stream is re-serialized event by event; otherwise the bytes pass unchanged. True when
  // something was passed on.
  const passOn = (controller: ReadableStreamDefaultController<Uint8Array>, events: string[], bytes?: Uint8Array) => {
    if (!reader.hideEvent) {
      if (bytes) controller.enqueue(bytes);
      return bytes !== undefined;
    }
    const shown = events.filter((data) => !reader.hideEvent?.(data));
    if (shown.length > 0) controller.enqueue(encoder.encode(shown.map((data) => `data: ${data}\n\n`).join("")));
    return shown.length > 0;
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // A pull that passes nothing on (half an event, or only a hidden one) must read on: the stream calls pull
        // again only after an enqueue or a new read, and a reader that waits for this one would wait forever.
        for (;;) {
          const { done, value } = await upstream.read();
          const events = consume(done, value);
          // The client left while this read waited: the cancel reads on and settles.
          if (clientLeft) return;
          const passed = passOn(controller, events, value);
          if (done) {
            finish();
            controller.close();
            return;
          }
          if (passed) return;
        }
      } catch (error) {
        if (clientLeft) return;
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      clientLeft = true;
      if (outputText !== "") await readForUsage();
      finish();
      await upstream.cancel(reason);
    },
  });
}
