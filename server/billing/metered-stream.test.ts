import { afterEach, describe, expect, it, vi } from "vitest";
import { parseEventStream } from "../http/event-stream";
import { bytesOf, eventStreamOf } from "./__fixtures__/events";
import { captureLoggedEvents } from "./__fixtures__/logged-events";
import { readChunks } from "./__fixtures__/read-chunks";
import { chatStreamMeter } from "./chat-stream-meter";
import { meteredStream, type StreamBudget } from "./metered-stream";
import type { StreamMeter } from "./stream-meter";

const loggedEvents = captureLoggedEvents();

afterEach(() => {
  vi.useRealTimers();
});

/** A budget that writes down what it was told. */
function recordingBudget(overrides: Partial<StreamBudget> = {}) {
  const calls: string[] = [];
  const budget: StreamBudget = {
    charge: async (tokens) => void calls.push(`charge ${tokens}`),
    release: async () => void calls.push("release"),
    graceMs: 1000,
    ...overrides,
  };
  return { budget, calls };
}

/** Reads a metered stream as a caller does: every chunk, or `readChunks` of them and then leaves. */
async function readAll(stream: ReadableStream<Uint8Array>, options: { readChunks?: number } = {}) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const chunks: string[] = [];
  let failure: unknown;
  try {
    while (options.readChunks === undefined || chunks.length < options.readChunks) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(decoder.decode(value));
    }
    if (options.readChunks !== undefined) await reader.cancel();
  } catch (error) {
    failure = error;
  }
  return { chunks, failure };
}

async function run(chunks: string[], meter: StreamMeter, options: { failAfter?: boolean; readChunks?: number } = {}) {
  const { budget, calls } = recordingBudget();
  const read = await readAll(bytesOf(meteredStream(eventStreamOf(chunks, options), meter, budget)), options);
  return { ...read, calls };
}

const chat = () => chatStreamMeter({ allowedOutput: 100 });

describe("a metered chat stream", () => {
  it("passes every chunk unchanged and charges the reported usage once", async () => {
    const source = readChunks("chat-with-usage");
    const { chunks, calls } = await run(source, chat());
    expect(chunks).toEqual(source);
    expect(calls).toEqual(["charge 33"]);
  });

  it("reads CRLF line ends and lines cut anywhere (even inside a CRLF) as the same events", async () => {
    const source = readChunks("chat-with-usage-crlf-split");
    const { chunks, calls } = await run(source, chat());
    // Passed on as events complete: the same bytes, in pieces that end where events do.
    expect(chunks.join("")).toBe(source.join(""));
    expect(calls).toEqual(["charge 33"]);
  });

  it("charges the whole reservation for a completed stream that reported no usage", async () => {
    const source = readChunks("chat-without-usage");
    const { chunks, calls } = await run(source, chat());
    expect(chunks).toEqual(source);
    expect(calls).toEqual(["charge 100"]);
  });

  it("charges the text passed on when the upstream's read fails, and fails the caller's stream", async () => {
    const { chunks, failure, calls } = await run(readChunks("chat-without-usage").slice(0, 2), chat(), {
      failAfter: true,
    });
    expect(chunks).toHaveLength(2);
    expect((failure as Error).message).toBe("socket hang up");
    expect(calls).toEqual(["charge 17"]);
  });

  it("charges the text passed on when the stream ends in an error event, not the reservation", async () => {
    const source = readChunks("chat-error");
    const { chunks, failure, calls } = await run(source, chat());
    expect(chunks).toEqual(source);
    expect(failure).toBeUndefined();
    expect(calls).toEqual(["charge 24"]);
  });

  it("counts tool calls' names and arguments when the upstream breaks off", async () => {
    const { calls } = await run(readChunks("chat-tool-calls").slice(0, 2), chat(), { failAfter: true });
    expect(calls).toEqual(["charge 4"]); // get_weather{"cit
  });
});

describe("a client that leaves", () => {
  it("once output has passed: the upstream is read on for its usage", async () => {
    const { calls } = await run(readChunks("chat-with-usage"), chat(), { readChunks: 2 });
    expect(calls).toEqual(["charge 33"]);
  });

  it("once output has passed, from a stream that completes without usage: the reservation", async () => {
    const { calls } = await run(readChunks("chat-without-usage"), chat(), { readChunks: 1 });
    expect(calls).toEqual(["charge 100"]);
  });

  it("while the upstream stalls: the text passed on, once the grace runs out", async () => {
    const source = readChunks("chat-with-usage").slice(0, 2);
    let cancelled = false;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of source) controller.enqueue(new TextEncoder().encode(chunk));
      },
      cancel: () => void (cancelled = true),
    });
    const { budget, calls } = recordingBudget({ graceMs: 20 });
    const started = performance.now();
    await readAll(bytesOf(meteredStream(parseEventStream(stalled), chat(), budget)), { readChunks: 2 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(15);
    expect(calls).toEqual(["charge 17"]);
    expect(cancelled).toBe(true);
  });

  it("before any output: everything is released, without waiting", async () => {
    const { calls } = await run(readChunks("chat-tool-calls"), chat(), { readChunks: 0 });
    expect(calls).toEqual(["release"]);
  });
});

describe("the charge at a metered stream's end", () => {
  it("is logged when it fails, never thrown, and made once", async () => {
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const source = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const failing = () => {
      throw new Error("database is locked");
    };
    const { budget, calls } = recordingBudget({ charge: failing });
    const reading = readAll(bytesOf(meteredStream(parseEventStream(source), chat(), budget)));
    for (const chunk of readChunks("chat-with-usage")) controller.enqueue(new TextEncoder().encode(chunk));
    controller.close();
    const { chunks, failure } = await reading;
    expect(chunks).toHaveLength(4);
    expect(failure).toBeUndefined();
    expect(calls).toEqual([]);
    expect(await loggedEvents()).toEqual([["error", "prepaid_settle_failed", { error: "database is locked" }]]);
  });
});
