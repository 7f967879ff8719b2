import { describe, expect, it } from "vitest";
import { finalUsageOf, prepaidCost, withUsageCost, x402Cost } from "./answer-cost";

const price = { amount: 1234n, decimals: 6, network: "eip155:137" };

describe("what an answer says it cost", () => {
  it("x402: the price as a USD decimal string, with the transaction once settled and null before", () => {
    expect(x402Cost(price, "0xabc")).toEqual({
      usage: { cost: "0.001234", cost_details: { network: "eip155:137", transaction: "0xabc" } },
      headers: { "X-Paysvc-Cost": "0.001234" },
    });
    expect(x402Cost({ ...price, amount: 4_733_000n }, undefined).usage).toEqual({
      cost: "4.733000",
      cost_details: { network: "eip155:137", transaction: null },
    });
  });

  it("prepaid: the tokens' worth, the tokens charged and the tokens left", () => {
    expect(prepaidCost({ amount: 7n, decimals: 6, chargedTokens: 100, remainingTokens: 99_900 })).toEqual({
      usage: { cost: "0.000007", prepaid_charged_tokens: 100, prepaid_remaining_tokens: 99_900 },
      headers: { "X-Paysvc-Cost": "0.000007", "X-Paysvc-Prepaid-Remaining": "99900" },
    });
    // A key spent to the last token.
    expect(prepaidCost({ amount: 0n, decimals: 6, chargedTokens: 0, remainingTokens: 0 })).toEqual({
      usage: { cost: "0.000000", prepaid_charged_tokens: 0, prepaid_remaining_tokens: 0 },
      headers: { "X-Paysvc-Cost": "0.000000", "X-Paysvc-Prepaid-Remaining": "0" },
    });
  });

  it("appends the fields to the usage object, leaving every other field and its order as it was", () => {
    const body = { id: "x", usage: { prompt_tokens: 1, completion_tokens: 2 }, model: "m" };
    const stated = withUsageCost(body, { cost: "0.001000" });
    expect(JSON.stringify(stated)).toBe(
      '{"id":"x","usage":{"prompt_tokens":1,"completion_tokens":2,"cost":"0.001000"},"model":"m"}',
    );
    expect(body.usage).toEqual({ prompt_tokens: 1, completion_tokens: 2 });
  });

  it("leaves an answer without a usage object as it is", () => {
    const images = { created: 1, data: [{ b64_json: "AA==" }] };
    expect(withUsageCost(images, { cost: "0.041000" })).toBe(images);
    expect(withUsageCost({ usage: null }, { cost: "1" })).toEqual({ usage: null });
    expect(withUsageCost([1], { cost: "1" })).toEqual([1]);
  });

  it("finds the final usage of the canonical chat stream, and nothing else", () => {
    const usage = { completion_tokens: 3 };
    expect(finalUsageOf({ choices: [], usage })).toBe(usage);
    expect(finalUsageOf({ usage })).toBe(usage);
    expect(finalUsageOf({ choices: [{ delta: {} }], usage })).toBeUndefined();
    expect(finalUsageOf({ choices: [], usage: null })).toBeUndefined();
    expect(finalUsageOf({ type: "other", response: { usage } })).toBeUndefined();
    expect(finalUsageOf("[DONE]")).toBeUndefined();
  });
});
