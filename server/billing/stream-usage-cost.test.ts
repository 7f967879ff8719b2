import { describe, expect, it } from "vitest";
import { readChunks } from "./__fixtures__/read-chunks";
import { withStreamUsageCost, type UsageCostFields } from "./stream-usage-cost";
import { bytesOf, eventStreamOf } from "./__fixtures__/events";
import { captureLoggedEvents } from "./__fixtures__/logged-events";
import { EventSplitter, parseEventStream, SseEvent } from "../http/event-stream";

const loggedEvents = captureLoggedEvents();

async function readText(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    text += decoder.decode(value, { stream: true });
  }
}

/** The stream's text with `fields` appended to the object that `find` locates in the event whose data matches. */
function expectedText(chunks: string[], marker: string, edit: (event: Record<string, unknown>) => void): string {
  const text = chunks.join("");
  const line = text
    .split(/\r\n|\r|\n/)
    .find((candidate) => candidate.startsWith("data:") && candidate.includes(marker));
  if (!line) throw new Error(`no data line with ${marker}`);
  const event = JSON.parse(line.slice("data: ".length)) as Record<string, unknown>;
  edit(event);
  return text.replace(line, `data: ${JSON.stringify(event)}`);
}

const COST = { cost: "0.001234", cost_details: { network: "eip155:137", transaction: "0xabc" } };

async function run(chunks: string[], fieldsFor: UsageCostFields = () => COST) {
  const seen: Record<string, unknown>[] = [];
  const text = await readText(
    bytesOf(
      withStreamUsageCost(eventStreamOf(chunks), (usage) => {
        seen.push({ ...usage });
        return fieldsFor(usage);
      }),
    ),
  );
  return { text, seen };
}

describe("withStreamUsageCost", () => {
  it("appends the cost to the usage-only chunk of a chat stream, every other byte as it came", async () => {
    const chunks = readChunks("chat-with-usage");
    const { text, seen } = await run(chunks);
    expect(seen).toEqual([{ prompt_tokens: 10, completion_tokens: 33, total_tokens: 43 }]);
    expect(text).toBe(expectedText(chunks, '"choices":[]', (event) => Object.assign(event.usage as object, COST)));
    expect(text).toContain(
      '"usage":{"prompt_tokens":10,"completion_tokens":33,"total_tokens":43,"cost":"0.001234","cost_details":{"network":"eip155:137","transaction":"0xabc"}}}\n\ndata: [DONE]\n\n',
    );
  });

  it("keeps CRLF line ends, comments, and events cut anywhere, including between CR and LF", async () => {
    const chunks = readChunks("chat-with-usage-crlf-split");
    const { text, seen } = await run(chunks);
    expect(seen).toHaveLength(1);
    expect(text).toBe(expectedText(chunks, '"choices":[]', (event) => Object.assign(event.usage as object, COST)));
    expect(text.startsWith(": PROCESSING\r\n\r\n")).toBe(true);
  });

  it("passes a stream without a usage object through untouched, in the same bytes", async () => {
    const chunks = readChunks("chat-without-usage");
    const { text, seen } = await run(chunks);
    expect(seen).toEqual([]);
    expect(text).toBe(chunks.join(""));
  });

  it("leaves chunks that carry usage beside their choices alone (a running count is not the final usage)", async () => {
    const running = `data: {"choices":[{"delta":{"content":"a"}}],"usage":{"completion_tokens":1}}\n\n`;
    const { text, seen } = await run([running, "data: [DONE]\n\n"]);
    expect(seen).toEqual([]);
    expect(text).toBe(`${running}data: [DONE]\n\n`);
  });

  it("reads JSON written with spaces and data over several lines, and writes it back on one", async () => {
    const spaced = 'data: {"choices": [], "usage": {"completion_tokens": 5}}\n\n';
    expect((await run([spaced], () => ({ cost: "0.1" }))).text).toBe(
      'data: {"choices":[],"usage":{"completion_tokens":5,"cost":"0.1"}}\n\n',
    );
    const split = 'id: 7\ndata: {"choices": [],\ndata: "usage": {"completion_tokens": 5}}\n\n';
    expect((await run([split], () => ({ cost: "0.1" }))).text).toBe(
      'id: 7\ndata: {"choices":[],"usage":{"completion_tokens":5,"cost":"0.1"}}\n\n',
    );
  });

  it("states the cost once, and waits for fields computed asynchronously", async () => {
    const usage = `data: {"choices":[],"usage":{"completion_tokens":5}}\n\n`;
    const { text, seen } = await run([usage, usage], async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { cost: "0.000001" };
    });
    expect(seen).toHaveLength(1);
    expect(text).toBe(`data: {"choices":[],"usage":{"completion_tokens":5,"cost":"0.000001"}}\n\n${usage}`);
  });

  it("passes the events before the usage event on without waiting for its cost, when they come in one batch", async () => {
    const text = `data: {"choices":[{"index":0,"delta":{"content":"Hi"}}]}\n\ndata: {"choices":[],"usage":{"completion_tokens":5}}\n\ndata: [DONE]\n\n`;
    let decide!: (fields: Record<string, unknown>) => void;
    const decided = new Promise<Record<string, unknown>>((resolve) => (decide = resolve));
    const source = new ReadableStream<SseEvent[]>({
      start(controller) {
        controller.enqueue(new EventSplitter().push(Buffer.from(text)));
        controller.close();
      },
    });
    const reader = withStreamUsageCost(source, () => decided).getReader();
    expect((await reader.read()).value?.map((event) => event.data)).toEqual([
      '{"choices":[{"index":0,"delta":{"content":"Hi"}}]}',
    ]);
    const rest = reader.read();
    decide({ cost: "0.000001" });
    expect((await rest).value?.map((event) => event.json()?.usage ?? event.data)).toEqual([
      { completion_tokens: 5, cost: "0.000001" },
      "[DONE]",
    ]);
    expect((await reader.read()).done).toBe(true);
  });

  it("passes the event on as it came when the fields cannot be had, and says so in the log", async () => {
    const usage = `data: {"choices":[],"usage":{"completion_tokens":5}}\n\n`;
    const none = await run([usage], () => undefined);
    expect(none.text).toBe(usage);
    const failing = await run([usage], async () => {
      throw new Error("database is locked");
    });
    expect(failing.text).toBe(usage);
    expect(await loggedEvents()).toContainEqual(["error", "usage_cost_failed", { error: "database is locked" }]);
  });

  it("passes on a last event that the stream ended without terminating", async () => {
    const { text } = await run(['data: {"a":1}\n\ndata: {"choices":[],"usage":{"completion_tokens":5}}']);
    expect(text).toBe(
      'data: {"a":1}\n\ndata: {"choices":[],"usage":{"completion_tokens":5,"cost":"0.001234","cost_details":{"network":"eip155:137","transaction":"0xabc"}}}',
    );
  });

  it("appends it to events made here, such as a native stream decoded to the canonical one", async () => {
    const usageOnly = SseEvent.of({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 5 } });
    const source = new ReadableStream<SseEvent[]>({
      start(controller) {
        controller.enqueue([SseEvent.of({ choices: [{ delta: { content: "hi" } }] })]);
        controller.enqueue([usageOnly, new SseEvent("[DONE]")]);
        controller.close();
      },
    });
    const text = await readText(bytesOf(withStreamUsageCost(source, () => ({ cost: "0.000002" }))));
    expect(text).toContain(
      'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"cost":"0.000002"}}\n\ndata: [DONE]\n\n',
    );
  });

  it("cancels its source when the caller leaves", async () => {
    let cancelled: unknown;
    const source = new ReadableStream<Uint8Array>({
      pull: (controller) => controller.enqueue(new TextEncoder().encode('data: {"a":1}\n\n')),
      cancel: (reason) => void (cancelled = reason),
    });
    const reader = withStreamUsageCost(parseEventStream(source), () => COST).getReader();
    await reader.read();
    await reader.cancel("gone");
    expect(cancelled).toBe("gone");
  });
});
