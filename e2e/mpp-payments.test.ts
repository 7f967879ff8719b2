import { Mppx, evm } from "mppx/client";
import OpenAI from "openai";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { fundedPayer } from "./support/funded-payer";
import { chatBody, polygon, quote, stack, usdcBalance } from "./support/payments";

/** mppx's own client with its EVM charge method, paying from a local-chain account. */
function mppFetch(privateKey: `0x${string}`) {
  const account = privateKeyToAccount(privateKey);
  const mppx = Mppx.create({
    methods: [evm({ account, maxAmount: "5", authorization: polygon.usdc.eip712, decimals: 6 })],
    polyfill: false,
  });
  return mppx.fetch;
}

describe("MPP", () => {
  it("pays a chat completion", async () => {
    const payer = await fundedPayer(10_000_000n);
    const body = chatBody("Hello by MPP");
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const before = await usdcBalance(payer.address);
    const response = await mppFetch(payer.key)(`${stack().appUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    console.log(response.status, response.headers.get("payment-receipt"), await response.text());
    expect(before - (await usdcBalance(payer.address))).toBe(price);
    void OpenAI;
  });
});
