import { describe, expect, it } from "vitest";
import { SseEvent, type EventStream } from "../http/event-stream";
import { chatStreamMeter } from "./chat-stream-meter";
import { passedWhileSettling } from "./stream-while-settling";

const chunk = (content: string) =>
  new SseEvent(JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] }));
const failed = () => SseEvent.of({ error: { code: "settlement_failed" } });

/** A source the test feeds batch by batch; `cancelled` once the stream gave up on it. */
function source() {
  let controller!: ReadableStreamDefaultController<SseEvent[]>;
  let cancelled = false;
  const stream: EventStream = new ReadableStream<SseEvent[]>({
    start: (given) => void (controller = given),
    cancel: () => void (cancelled = true),
  });
  return {
    stream,
    push: (...events: SseEvent[]) => controller.enqueue(events),
    end: () => controller.close(),
    get cancelled() {
      return cancelled;
    },
  };
}

/** A settlement the test decides. */
function settlement() {
  let decide!: (paid: boolean) => void;
  return { paid: new Promise<boolean>((resolve) => (decide = resolve)), decide };
}

const dataOf = (batch: SseEvent[] | undefined) => batch?.map((event) => event.data ?? JSON.stringify(event.json()));

describe("a stream passed on while its payment settles", () => {
  it("passes events at once, but holds [DONE] and the end until the settlement is in", async () => {
    const upstream = source();
    const { paid, decide } = settlement();
    const reader = passedWhileSettling(upstream.stream, paid, undefined, failed).getReader();
    upstream.push(chunk("Hel"));
    expect(dataOf((await reader.read()).value)).toHaveLength(1);
    upstream.push(chunk("lo"), new SseEvent("[DONE]"));
    upstream.end();
    expect(dataOf((await reader.read()).value)).toHaveLength(1);
    let next: Promise<ReadableStreamReadResult<SseEvent[]>> | undefined = reader.read();
    const early = await Promise.race([next, new Promise((resolve) => setTimeout(() => resolve("waiting"), 30))]);
    expect(early).toBe("waiting");
    decide(true);
    expect(dataOf((await next).value)).toEqual(["[DONE]"]);
    next = reader.read();
    expect((await next).done).toBe(true);
  });

  it("ends with the error event at once when the settlement is refused mid-stream, and drops the upstream", async () => {
    const upstream = source();
    const { paid, decide } = settlement();
    const meter = chatStreamMeter({ allowedOutput: 100 });
    const reader = passedWhileSettling(upstream.stream, paid, meter, failed).getReader();
    upstream.push(chunk("one two three"));
    await reader.read();
    const pending = reader.read();
    decide(false);
    expect((await pending).value?.[0]?.json()).toEqual({ error: { code: "settlement_failed" } });
    expect((await reader.read()).done).toBe(true);
    expect(upstream.cancelled).toBe(true);
    // What it passed on is what the meter counted: the text, as the input is counted.
    expect(meter.result(false)).toBeGreaterThan(0);
  });

  it("ends with the error event instead of [DONE] when the settlement is refused after the upstream finished", async () => {
    const upstream = source();
    const { paid, decide } = settlement();
    const reader = passedWhileSettling(upstream.stream, paid, undefined, failed).getReader();
    upstream.push(chunk("all of it"), new SseEvent("[DONE]"));
    upstream.end();
    await reader.read();
    setTimeout(() => decide(false), 10);
    const last = await reader.read();
    expect(last.value?.map((event) => event.data)).not.toContain("[DONE]");
    expect(last.value?.[0]?.json()).toEqual({ error: { code: "settlement_failed" } });
    expect((await reader.read()).done).toBe(true);
  });
});
