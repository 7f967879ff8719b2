import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { countTextTokens } from "../pricing/count-tokens";
import { chatStreamMeter } from "./chat-stream-meter";
import { meteredStream } from "./metered-stream";
import { responsesStreamMeter } from "./responses-stream-meter";
import type { StreamMeter } from "./stream-meter";

/** Chunks as a provider sent them over the network, one array element a chunk (see __fixtures__). */
const fixture = (name: string): string[] =>
  JSON.parse(readFileSync(join(__dirname, "__fixtures__", `${name}.chunks.json`), "utf8")) as string[];

const encoder = new TextEncoder();

function sourceOf(chunks: string[], options: { failAfter?: boolean } = {}): ReadableStream<Uint8Array> {
  let index = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = chunks[index++];
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (options.failAfter) controller.error(new Error("socket hang up"));
      else controller.close();
    },
  });
}

/** Runs a fixture through the metered stream: what the caller read, and what the budget was told. */
async function meter(
  chunks: string[],
  streamMeter: StreamMeter,
  options: { failAfter?: boolean; readChunks?: number } = {},
) {
  const calls: string[] = [];
  const stream = meteredStream(sourceOf(chunks, options), streamMeter, {
    charge: (tokens) => calls.push(`charge ${tokens}`),
    release: () => calls.push("release"),
    extend: () => calls.push("extend"),
    ttlMs: 60_000,
    graceMs: 1000,
  });
  const reader = stream.getReader();
  let text = "";
  const decoder = new TextDecoder();
  try {
    for (let read = 0; options.readChunks === undefined || read < options.readChunks; read++) {
      const { done, value } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    if (options.readChunks !== undefined) await reader.cancel();
  } catch {
    // A failed upstream errors the caller's stream; what the budget was told is checked below.
  }
  return { text, calls };
}

const chat = (hideUsageOnlyChunks = false) => chatStreamMeter({ allowedOutput: 100, hideUsageOnlyChunks });

describe("a metered chat stream", () => {
  it("passes the bytes unchanged and charges the reported usage once", async () => {
    const chunks = fixture("chat-with-usage");
    const { text, calls } = await meter(chunks, chat());
    expect(text).toBe(chunks.join(""));
    expect(calls).toEqual(["charge 5"]);
  });

  it("reads CRLF line ends and lines cut anywhere (even inside a CRLF) as the same events", async () => {
    const chunks = fixture("chat-with-usage-crlf-split");
    expect(chunks.some((chunk) => chunk.endsWith("\r"))).toBe(true);
    const { text, calls } = await meter(chunks, chat());
    expect(text).toBe(chunks.join(""));
    expect(calls).toEqual(["charge 5"]);
  });

  it("hides the usage-only chunk the caller did not ask for, and passes every other event", async () => {
    const { text, calls } = await meter(fixture("chat-with-usage-crlf-split"), chat(true));
    expect(text).not.toContain('"usage"');
    expect(text).toContain("Harbor");
    expect(text.match(/^data: /gm)?.length).toBe(6);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    expect(calls).toEqual(["charge 5"]);
  });

  it("charges the whole reservation for a completed stream that reported no usage", async () => {
    expect((await meter(fixture("chat-without-usage"), chat())).calls).toEqual(["charge 100"]);
  });

  it("counts the text passed on when the stream ends in an error event", async () => {
    const { calls } = await meter(fixture("chat-error"), chat());
    expect(calls).toEqual([`charge ${countTextTokens("Harbor lights")}`]);
  });

  it("counts tool calls' names and arguments when the upstream breaks off", async () => {
    const { calls } = await meter(fixture("chat-tool-calls").slice(0, 3), chat(), { failAfter: true });
    expect(calls).toEqual([`charge ${countTextTokens('get_weather{"city":"Oslo"}')}`]);
  });

  it("reads on for the usage after the client leaves once output has passed", async () => {
    const { calls } = await meter(fixture("chat-with-usage"), chat(), { readChunks: 2 });
    expect(calls).toEqual(["charge 5"]);
  });

  it("releases everything when the client leaves before any output", async () => {
    const { calls } = await meter(fixture("chat-with-usage"), chat(), { readChunks: 1 });
    expect(calls).toEqual(["release"]);
  });
});

describe("a metered Responses stream", () => {
  it("charges the output tokens of response.completed", async () => {
    const chunks = fixture("responses-with-usage");
    const { text, calls } = await meter(chunks, responsesStreamMeter({ allowedOutput: 100 }));
    expect(text).toBe(chunks.join(""));
    expect(calls).toEqual(["charge 3"]);
  });

  it("counts the deltas passed on when the stream breaks before completing", async () => {
    const chunks = fixture("responses-with-usage").slice(0, 3);
    const { calls } = await meter(chunks, responsesStreamMeter({ allowedOutput: 100 }), { failAfter: true });
    expect(calls).toEqual([`charge ${countTextTokens("Harbor lights")}`]);
  });
});
