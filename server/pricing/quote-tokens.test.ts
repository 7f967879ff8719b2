import { describe, expect, it } from "vitest";
import { chatLimits } from "../../config/limits";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { findChatModel } from "../../config/catalog/model-catalog";

const gptModels = defaultCatalog().chat;
import { getNetwork } from "../../networks";
import { countChatInputTokens, countTextTokens } from "./count-tokens";
import { quoteTokens } from "./quote-tokens";

const polygon = getNetwork("eip155:137");
const model = (id: string) => {
  const found = findChatModel(defaultCatalog(), id);
  if (!found) throw new Error(id);
  return found;
};

describe("quoteTokens", () => {
  it("reaches exactly the spec's maximum of 4.733000 USD at the limits of the most expensive model", () => {
    const quote = quoteTokens({
      model: model("vendor-a/gpt-5.6-sol"),
      inputTokens: chatLimits.maxInputTokens,
      maxOutputTokens: chatLimits.maxOutputTokens,
      network: polygon,
    });
    expect(quote.amount).toBe(4_733_000n);
    expect(quote.display.total_usd).toBe("4.733000");
    expect(quote.display.input_usd).toBe("2.94");
    expect(quote.display.output_usd).toBe("1.792");
  });

  it("never quotes below the 0.001 USD minimum", () => {
    const quote = quoteTokens({
      model: model("vendor-a/gpt-6-luna"),
      inputTokens: 0,
      maxOutputTokens: 0,
      network: polygon,
    });
    expect(quote.amount).toBe(1000n);
    expect(quote.display.total_usd).toBe("0.001000");
  });

  it("rounds a fraction of an atomic unit up, once, after adding input and output", () => {
    // 1 token at 0.07/1M = 0.07 atomic units; 1 token at 0.35/1M = 0.35; together 0.42 -> 1, plus 1000 overhead.
    const quote = quoteTokens({
      model: model("vendor-a/gpt-6-luna"),
      inputTokens: 1,
      maxOutputTokens: 1,
      network: polygon,
    });
    expect(quote.amount).toBe(1001n);
    expect(quote.display.input_usd).toBe("0.00000007");
  });

  it("prices 1000 input tokens and the default output cap of every model from the table", () => {
    const expected: Record<string, bigint> = {
      "vendor-a/gpt-5.6-sol": 61_144n, // 2800 + 57344 + 1000
      "vendor-a/gpt-5.6-terra": 36_807n, // 1400 + 34406.4 -> 35807 (rounded up) + 1000
      "vendor-a/gpt-6-luna": 2_504n, // 70 + 1433.6 -> 1504 + 1000
      "vendor-a/gpt-6-sol": 31_072n, // 1400 + 28672 + 1000
    };
    for (const gpt of gptModels) {
      const quote = quoteTokens({ model: gpt, inputTokens: 1000, maxOutputTokens: 4096, network: polygon });
      expect(quote.amount, gpt.id).toBe(expected[gpt.id]);
    }
  });
});

describe("token counting", () => {
  it("counts special-token text as plain text instead of throwing", () => {
    expect(countTextTokens("<|endoftext|>")).toBeGreaterThan(1);
    expect(countTextTokens("")).toBe(0);
  });

  it("adds the per-message framing and the tool definitions", () => {
    const one = countChatInputTokens([{ role: "user", content: "hello" }]);
    expect(one).toBe(3 + 3 + countTextTokens("user") + countTextTokens("hello"));
    const withTools = countChatInputTokens([{ role: "user", content: "hello" }], [{ type: "function" }]);
    expect(withTools).toBeGreaterThan(one);
    const parts = countChatInputTokens([{ role: "user", content: [{ type: "text", text: "hello" }] }]);
    expect(parts).toBe(one);
  });
});
