import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { chatLimits } from "../../config/limits";
import { getNetwork } from "../../networks";
import { countChatInputTokens } from "./count-tokens";
import { countQuotedInput, highestChatQuote, quoteCompletion, YIELDING_INPUT_CHARS } from "./quote-completion";

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

describe("quoteCompletion", () => {
  const [model] = defaultCatalog().chat;
  const quoteOf = (content: string) =>
    quoteCompletion({
      model: model!,
      request: { model: model!.id, messages: [{ role: "user", content }] },
      maxOutputTokens: 16,
      network: polygon,
      description: "test",
    });

  it("is the quote itself for a short input, and a promise of the same price for a long one", async () => {
    const short = quoteOf("hello there");
    expect(short).not.toBeInstanceOf(Promise);
    const long = "hello there ".repeat(YIELDING_INPUT_CHARS / 6);
    const quoted = quoteOf(long);
    expect(quoted).toBeInstanceOf(Promise);
    const { tokens } = await quoted;
    expect(tokens!.input).toBe(countChatInputTokens([{ role: "user", content: long }]));
  });

  it("rejects a long input over the limit with the service's refusal", async () => {
    await expect(quoteOf("a b ".repeat(600_000))).rejects.toMatchObject({ code: "context_length_exceeded" });
  });

  it("refuses an input of more words than the limit with the message counting gives", async () => {
    const limit = Math.min(chatLimits.maxInputTokens, model!.contextTokens);
    const message = `The input counts more than ${limit} tokens; the limit is ${limit}`;
    // More word starts than the limit (refused before counting), and numbers, which have none (counted to the limit).
    for (const content of ["ledger ".repeat(3_000_000), "1234567 ".repeat(limit / 2)]) {
      await expect(quoteOf(content)).rejects.toMatchObject({ code: "context_length_exceeded", message });
    }
  });
});

describe("countQuotedInput with images", () => {
  const luna = defaultCatalog().chat.find((model) => model.id === "vendor-a/gpt-6-luna")!;
  const withImages = (count: number) => ({
    messages: [
      {
        role: "user",
        content: Array.from({ length: count }, () => ({
          type: "image_url",
          image_url: { url: "https://images.example.invalid/a.png", detail: "low" },
        })),
      },
    ],
  });

  it("adds each image's tokens (an image by URL at the formula's most: 85 at low detail)", () => {
    const text = countQuotedInput(luna, { messages: [{ role: "user", content: [] }] }) as number;
    expect(countQuotedInput(luna, withImages(3))).toBe(text + 3 * 85);
  });

  it("stops reading images past the model's limit, and says the input is over it", () => {
    const small = { ...luna, contextTokens: 1000 };
    expect(() => countQuotedInput(small, withImages(10_000))).toThrow(/more than 1000 tokens; the limit is 1000/);
  });
});
