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
