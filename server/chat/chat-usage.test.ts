import { describe, expect, it } from "vitest";
import { completionTokens, tokenCount } from "./chat-usage";

// How stream chunks are read for billing is tested with the meter (server/billing/chat-stream-meter.test.ts).
describe("chat usage of a whole answer", () => {
  it("reads completion_tokens, and nothing from an answer without a numeric count", () => {
    expect(completionTokens({ usage: { prompt_tokens: 7, completion_tokens: 12, total_tokens: 19 } })).toBe(12);
    expect(completionTokens({ usage: null })).toBeUndefined();
    expect(completionTokens({ usage: { completion_tokens: "12" } })).toBeUndefined();
    expect(completionTokens(null)).toBeUndefined();
  });

  it("takes a count that is not a non-negative safe integer for no report, which bills as an unreported answer", () => {
    for (const wrong of [-1, -0.5, 10.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, 1e300]) {
      expect(tokenCount(wrong), String(wrong)).toBeUndefined();
      expect(completionTokens({ usage: { completion_tokens: wrong } }), String(wrong)).toBeUndefined();
    }
    expect(tokenCount(0)).toBe(0);
    expect(tokenCount(Number.MAX_SAFE_INTEGER)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
