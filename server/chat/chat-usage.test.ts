import { describe, expect, it } from "vitest";
import { completionTokens, isUsageOnlyChunk, streamedCompletionTokens, streamedOutputText } from "./chat-usage";

const delta = (extra: object = {}) =>
  JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: "hi" } }], ...extra });
const usage = { prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 };

describe("chat usage in stream events", () => {
  it("reads completion_tokens from the usage chunk, compact or spaced, and from a whole answer", () => {
    expect(streamedCompletionTokens(JSON.stringify({ choices: [], usage }))).toBe(12);
    expect(streamedCompletionTokens(JSON.stringify({ choices: [], usage }, null, 2))).toBe(12);
    expect(streamedCompletionTokens(delta({ usage }))).toBe(12); // a provider that reports it on a content chunk
    expect(completionTokens({ usage })).toBe(12);
  });

  it("finds nothing in deltas, null usage, text that only mentions the key, and non-JSON data", () => {
    expect(streamedCompletionTokens(delta())).toBeUndefined();
    expect(streamedCompletionTokens(delta({ usage: null }))).toBeUndefined();
    expect(streamedCompletionTokens(delta({ note: 'say "completion_tokens": 5' }))).toBeUndefined();
    expect(streamedCompletionTokens("[DONE]")).toBeUndefined();
    expect(streamedCompletionTokens('{"usage":{"completion_tokens":"12"}}')).toBeUndefined();
  });

  it("hides only chunks with empty choices and a usage field, however they are spaced", () => {
    expect(isUsageOnlyChunk(JSON.stringify({ choices: [], usage }))).toBe(true);
    expect(isUsageOnlyChunk('{ "choices" : [ ] , "usage" : null }')).toBe(true);
    expect(isUsageOnlyChunk(JSON.stringify({ choices: [] }))).toBe(false);
    expect(isUsageOnlyChunk(delta({ usage: null }))).toBe(false);
    expect(isUsageOnlyChunk(delta({ usage }))).toBe(false);
    expect(isUsageOnlyChunk(JSON.stringify({ choices: [{ delta: { content: '"choices":[]' } }], usage }))).toBe(false);
    expect(isUsageOnlyChunk("[DONE]")).toBe(false);
  });

  it("reads the output text of a chunk: content, reasoning, refusal, tool calls' names and arguments", () => {
    expect(streamedOutputText(delta())).toBe("hi");
    expect(streamedOutputText(JSON.stringify({ choices: [{ delta: { content: "a" } }] }, null, 2))).toBe("a");
    expect(
      streamedOutputText(
        JSON.stringify({
          choices: [
            { delta: { reasoning: "r", refusal: "n" } },
            { delta: { reasoning_content: "c", tool_calls: [{ function: { name: "f", arguments: '{"x"' } }] } },
            { delta: { reasoning: "same", reasoning_content: "same" } },
          ],
        }),
      ),
    ).toBe('rncf{"x"same');
    expect(streamedOutputText(JSON.stringify({ choices: [], usage }))).toBe("");
    expect(streamedOutputText(JSON.stringify({ choices: [{ delta: { content: null, tool_calls: "x" } }] }))).toBe("");
    expect(streamedOutputText(JSON.stringify({ error: { message: "delta" } }))).toBe("");
    expect(streamedOutputText("[DONE]")).toBe("");
  });
});
