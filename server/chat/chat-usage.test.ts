import { describe, expect, it } from "vitest";
import { completionTokens } from "./chat-usage";

// How stream chunks are read for billing is tested with the meter (server/billing/chat-stream-meter.test.ts).
describe("chat usage of a whole answer", () => {
  it("reads completion_tokens, and nothing from an answer without a numeric count", () => {
    expect(completionTokens({ usage: { prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 } })).toBe(12);
    expect(completionTokens({ usage: null })).toBeUndefined();
    expect(completionTokens({ usage: { completion_tokens: "12" } })).toBeUndefined();
    expect(completionTokens(null)).toBeUndefined();
  });
});
