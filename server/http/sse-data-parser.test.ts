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
