import { describe, expect, it } from "vitest";
import { EventSplitter, isErrorObject, parseEventStream, SseEvent, writeEventStream } from "./event-stream";

/** The splitter seen through the data of the events it yields, and the text of all of them. */
class DataOfEvents {
  private readonly splitter = new EventSplitter();
  private readonly encoder = new TextEncoder();
  text = "";
  push(text: string): string[] {
    return this.dataOf(this.splitter.push(this.encoder.encode(text)));
  }
  flush(): string[] {
    return this.dataOf(this.splitter.end());
  }
  private dataOf(events: SseEvent[]): string[] {
    for (const event of events) this.text += event.text();
    return events.flatMap((event) => (event.data === undefined ? [] : [event.data]));
  }
}

const isErrorEvent = (data: string) => {
  const json = new SseEvent(data).json();
  return json !== undefined && isErrorObject(json);
};

describe("EventSplitter", () => {
  it("yields the data of complete events only, whatever the chunking", () => {
    const parser = new DataOfEvents();
    expect(parser.push('data: {"a"')).toEqual([]);
    expect(parser.push(":1}\n\nevent: x\ndata: two\n")).toEqual(['{"a":1}']);
    expect(parser.push("\n: comment\n\ndata: [DONE]\r\n\r\n")).toEqual(["two", "[DONE]"]);
    expect(parser.flush()).toEqual([]);
  });

  it("joins multi-line data and returns an unterminated last event on flush", () => {
    const parser = new DataOfEvents();
    expect(parser.push("data: line one\ndata: line two\n\ndata:tail")).toEqual(["line one\nline two"]);
    expect(parser.flush()).toEqual(["tail"]);
  });

  it("keeps a CRLF split across two chunks one line end, not an event boundary", () => {
    const parser = new DataOfEvents();
    expect(parser.push("data: a\r")).toEqual([]);
    expect(parser.push("\n\r\ndata: b\r\n\r\n")).toEqual(["a", "b"]);
    expect(parser.push("data: c\r")).toEqual([]);
    expect(parser.push("\ndata: d\r\n\r\n")).toEqual(["c\nd"]);
  });

  it("reads lines split anywhere, and yields nothing for a comment alone", () => {
    const parser = new DataOfEvents();
    expect(parser.push(": PROCESSING\n\n")).toEqual([]);
    expect(parser.push("da")).toEqual([]);
    expect(parser.push('ta: {"x"')).toEqual([]);
    expect(parser.push(":2}\n")).toEqual([]);
    expect(parser.push("\n")).toEqual(['{"x":2}']);
  });

  it("yields each event once when a CRLF is split, and joins lines across a split CRLF", () => {
    const parser = new DataOfEvents();
    expect([...parser.push("data: a\r"), ...parser.push("\n\r\ndata: b\r\n\r\n")]).toEqual(["a", "b"]);
    expect(parser.push("data: c\r\n\r")).toEqual([]);
    expect(parser.push("\n")).toEqual(["c"]);
    expect(parser.flush()).toEqual([]);
  });

  it("reads CR alone as a line end, and skips id:, retry: and unknown fields", () => {
    const parser = new DataOfEvents();
    expect(parser.push("id: 7\rretry: 100\rdata: x\rfoo: bar\r\rdata: y\r\r")).toEqual(["x"]);
    // A CR that ends a chunk may be the first half of a CRLF: the event it ends waits for the next chunk.
    expect(parser.push("data: z\r\r")).toEqual(["y"]);
    expect(parser.flush()).toEqual(["z"]);
  });

  it("yields an event with no data line never, and an empty data line as an empty event", () => {
    const parser = new DataOfEvents();
    expect(parser.push("event: ping\n\n: keep-alive\n\ndata:\n\n")).toEqual([""]);
  });

  it("flushes an unterminated event whatever its last line end, and nothing twice", () => {
    const parser = new DataOfEvents();
    expect(parser.push("data: one\r")).toEqual([]);
    expect(parser.flush()).toEqual(["one"]);
    expect(parser.flush()).toEqual([]);
    expect(parser.push("data: two\n")).toEqual([]);
    expect(parser.flush()).toEqual(["two"]);
    expect(parser.push("event: x\n: comment")).toEqual([]);
    expect(parser.flush()).toEqual([]);
  });

  it("gives every character received to exactly one event's text, comments and line ends as they came", () => {
    const parser = new DataOfEvents();
    const pieces = [": PROCESSING\r\n\r", '\nid: 1\ndata: {"a"', ":1}\r\rdata: x\r\ndata: y\n\n\n", "data: tail"];
    for (const piece of pieces) parser.push(piece);
    parser.flush();
    expect(parser.text).toBe(pieces.join(""));
  });
});

describe("EventSplitter on long events", () => {
  it("takes an event cut into many pieces whole, its lines found across the cuts", () => {
    const splitter = new EventSplitter();
    const encoder = new TextEncoder();
    const long = "x".repeat(300_000);
    const text = `data: ${long}\r\ndata: end\r\n\r\ndata: next\r`;
    const events: SseEvent[] = [];
    for (let at = 0; at < text.length; at += 97) events.push(...splitter.push(encoder.encode(text.slice(at, at + 97))));
    expect(events.map((event) => event.data)).toEqual([`${long}\nend`]);
    events.push(...splitter.push(encoder.encode("\n\n")));
    expect(events.map((event) => event.text()).join("")).toBe(`${text}\n\n`);
  });

  it("fails a stream whose event grows past the longest taken", () => {
    const splitter = new EventSplitter(1000);
    const encoder = new TextEncoder();
    expect(splitter.push(encoder.encode(`data: ${"y".repeat(900)}\n\n`))).toHaveLength(1);
    splitter.push(encoder.encode(`data: ${"z".repeat(600)}`));
    expect(() => splitter.push(encoder.encode("z".repeat(600)))).toThrow(
      "the stream sent an event longer than 1000 characters",
    );
  });
});

describe("SseEvent", () => {
  it("parses its data once, as a JSON object only, and is written as it came until changed, its line ends kept", () => {
    const event = new SseEvent('{"model":"a","n":1}', undefined, 'data:{"model":"a","n":1}\r\n\r\n');
    const json = event.json()!;
    expect(event.json()).toBe(json);
    expect(event.text()).toBe('data:{"model":"a","n":1}\r\n\r\n');
    json.model = "b";
    event.changed();
    expect(event.text()).toBe('data: {"model":"b","n":1}\r\n\r\n');
    for (const data of ["[DONE]", "[1]", "{not json", "7"]) expect(new SseEvent(data).json()).toBeUndefined();
    expect(new SseEvent(' {"a":1}').json()).toEqual({ a: 1 });
  });

  it("writes events made here with their name, and multi-line data as several data lines", () => {
    expect(SseEvent.of({ type: "response.created" }, "response.created").text()).toBe(
      'event: response.created\ndata: {"type":"response.created"}\n\n',
    );
    expect(new SseEvent("one\ntwo").text()).toBe("data: one\ndata: two\n\n");
  });

  it("makes a stream of batches from bytes, one per read that completed an event, and bytes back from it", async () => {
    const encoder = new TextEncoder();
    const reads = ["data: a\n", "\ndata: b\n\ndata: c", "\n\n"];
    const source = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const read of reads) controller.enqueue(encoder.encode(read));
        controller.close();
      },
    });
    const batches: string[][] = [];
    const written = writeEventStream(
      parseEventStream(source).pipeThrough(
        new TransformStream<SseEvent[], SseEvent[]>({
          transform(batch, controller) {
            batches.push(batch.map((event) => event.data ?? ""));
            controller.enqueue(batch);
          },
        }),
      ),
    );
    expect(await new Response(written).text()).toBe(reads.join(""));
    expect(batches).toEqual([["a", "b"], ["c"]]);
  });
});

describe("isErrorEvent", () => {
  it("finds an error object at the top level, first or not, and Responses' error type", () => {
    expect(isErrorEvent('{"error":{"message":"x"}}')).toBe(true);
    expect(isErrorEvent('{ "id": "c1", "object": "chat.completion.chunk", "error": {"code": 502} }')).toBe(true);
    expect(isErrorEvent('{"type":"error","code":"server_error"}')).toBe(true);
  });

  it("finds none in content that says error, a null error, or data that is not JSON", () => {
    expect(isErrorEvent('{"choices":[{"delta":{"content":"error"}}]}')).toBe(false);
    expect(isErrorEvent('{"choices":[{"delta":{"content":"an \\"error\\""}}]}')).toBe(false);
    expect(isErrorEvent('{"id":"c1","error":null,"choices":[]}')).toBe(false);
    expect(isErrorEvent('data "error"')).toBe(false);
    expect(isErrorEvent("[DONE]")).toBe(false);
  });
});
