import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { findChatModel, type ChatModel } from "../../config/catalog/model-catalog";
import { getNetwork } from "../../networks";
import { prepaidTokensCost } from "./prepaid-token-cost";
import { quotePrepaidPack } from "./quote-tokens";

const model = (id: string) => findChatModel(defaultCatalog(), id) as ChatModel;
const polygon = getNetwork("eip155:137");

describe("prepaidTokensCost", () => {
  it("prices tokens at the model's input rate, exactly", () => {
    // sol: 2.80 USD per 1M = 2.8 atomic units per token.
    expect(prepaidTokensCost(model("vendor-a/gpt-5.6-sol"), 1000, 6)).toBe(2800n);
    expect(prepaidTokensCost(model("vendor-a/gpt-6-luna"), 1_000_000, 6)).toBe(70_000n);
  });

  it("rounds a fraction of an atomic unit up, once", () => {
    // luna: 0.07 atomic units per token; 15 tokens are 1.05 units.
    expect(prepaidTokensCost(model("vendor-a/gpt-6-luna"), 15, 6)).toBe(2n);
    expect(prepaidTokensCost(model("vendor-a/gpt-6-luna"), 1, 6)).toBe(1n);
    expect(prepaidTokensCost(model("vendor-a/gpt-6-luna"), 0, 6)).toBe(0n);
  });

  it("makes a whole pack worth what it sold for, less the settlement fee", () => {
    const sol = model("vendor-a/gpt-5.6-sol");
    const pack = quotePrepaidPack(sol, 1_000_000, polygon);
    expect(prepaidTokensCost(sol, 1_000_000, 6)).toBe(pack.amount - 1000n);
  });
});
