import { describe, expect, it } from "vitest";
import { SseDataParser } from "./sse-data-parser";

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
