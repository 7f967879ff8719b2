import { describe, expect, it } from "vitest";
import { isErrorEvent, SseDataParser } from "./sse-data-parser";

describe("SseDataParser", () => {
  it("yields the data of complete events only, whatever the chunking", () => {
    const parser = new SseDataParser();
    expect(parser.push('data: {"a"')).toEqual([]);
    expect(parser.push(":1}\n\nevent: x\ndata: two\n")).toEqual(['{"a":1}']);
    expect(parser.push("\n: comment\n\ndata: [DONE]\r\n\r\n")).toEqual(["two", "[DONE]"]);
    expect(parser.flush()).toEqual([]);
  });

  it("joins multi-line data and returns an unterminated last event on flush", () => {
    const parser = new SseDataParser();
    expect(parser.push("data: line one\ndata: line two\n\ndata:tail")).toEqual(["line one\nline two"]);
    expect(parser.flush()).toEqual(["tail"]);
  });

  it("keeps a CRLF split across two chunks one line end, not an event boundary", () => {
    const parser = new SseDataParser();
    expect(parser.push("data: a\r")).toEqual([]);
    expect(parser.push("\n\r\ndata: b\r\n\r\n")).toEqual(["a", "b"]);
    expect(parser.push("data: c\r")).toEqual([]);
    expect(parser.push("\ndata: d\r\n\r\n")).toEqual(["c\nd"]);
  });

  it("reads lines split anywhere, and yields nothing for a comment alone", () => {
    const parser = new SseDataParser();
    expect(parser.push(": PROCESSING\n\n")).toEqual([]);
    expect(parser.push("da")).toEqual([]);
    expect(parser.push('ta: {"x"')).toEqual([]);
    expect(parser.push(":2}\n")).toEqual([]);
    expect(parser.push("\n")).toEqual(['{"x":2}']);
  });

  it("yields each event once when a CRLF is split, and joins lines across a split CRLF", () => {
    const parser = new SseDataParser();
    expect([...parser.push("data: a\r"), ...parser.push("\n\r\ndata: b\r\n\r\n")]).toEqual(["a", "b"]);
    expect(parser.push("data: c\r\n\r")).toEqual([]);
    expect(parser.push("\n")).toEqual(["c"]);
    expect(parser.flush()).toEqual([]);
  });

  it("reads CR alone as a line end, and skips id:, retry: and unknown fields", () => {
    const parser = new SseDataParser();
    expect(parser.push("id: 7\rretry: 100\rdata: x\rfoo: bar\r\rdata: y\r\r")).toEqual(["x"]);
    // A CR that ends a chunk may be the first half of a CRLF: the event it ends waits for the next chunk.
    expect(parser.push("data: z\r\r")).toEqual(["y"]);
    expect(parser.flush()).toEqual(["z"]);
  });

  it("yields an event with no data line never, and an empty data line as an empty event", () => {
    const parser = new SseDataParser();
    expect(parser.push("event: ping\n\n: keep-alive\n\ndata:\n\n")).toEqual([""]);
  });

  it("flushes an unterminated event whatever its last line end, and nothing twice", () => {
    const parser = new SseDataParser();
    expect(parser.push("data: one\r")).toEqual([]);
    expect(parser.flush()).toEqual(["one"]);
    expect(parser.flush()).toEqual([]);
    expect(parser.push("data: two\n")).toEqual([]);
    expect(parser.flush()).toEqual(["two"]);
    expect(parser.push("event: x\n: comment")).toEqual([]);
    expect(parser.flush()).toEqual([]);
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
