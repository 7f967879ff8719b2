import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { getNetwork } from "../../networks";
import { highestChatQuote } from "./quote-completion";

const polygon = getNetwork("eip155:137");

describe("highestChatQuote", () => {
  it("is the spec's 4.733000 USD for the default catalog", () => {
    expect(highestChatQuote(defaultCatalog().chat, polygon)).toBe(4_733_000n);
  });

  it("follows an operator's prices and each model's own limits", () => {
    const [first] = defaultCatalog().chat;
    const pricier = { ...first!, id: "acme/pricey", inputUsdPerMillion: "1", outputUsdPerMillion: "100" };
    // 1,050,000 input tokens at 1 USD/1M, 128,000 output at 100 USD/1M, plus the 0.001 USD overhead.
    expect(highestChatQuote([pricier], polygon)).toBe(1_050_000n + 12_800_000n + 1_000n);
    const small = { ...pricier, contextTokens: 32_000, maxOutputTokens: 1_000 };
    expect(highestChatQuote([small], polygon)).toBe(32_000n + 100_000n + 1_000n);
  });
});
