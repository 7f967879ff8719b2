import { wrapFetchWithPayment } from "@x402/fetch";
import OpenAI from "openai";
import { createTestClient, http } from "viem";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, chatBody, payingClient, quoteOf, startNetworkStack } from "./support/network-stack";

describe("Base (eip155:8453)", () => {
  const usdc = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" as const;
  let started: Awaited<ReturnType<typeof startNetworkStack>>;
  beforeAll(async () => {
    started = await startNetworkStack("eip155:8453");
  });
  afterAll(async () => {
    await started?.remove();
  });

  it("names its own network and asset in /health, /v1/models and the 402", async () => {
    const { stack } = started;
    expect((await (await fetch(`${stack.appUrl}/health`)).json()).network).toBe("eip155:8453");
    const models = await (await fetch(`${stack.appUrl}/v1/models`)).json();
    expect(models.data[0].payment).toMatchObject({ network: "eip155:8453", asset: usdc });
    expect((await quoteOf(stack, "/v1/chat/completions", chatBody("x"))).accepts[0]).toMatchObject({
      network: "eip155:8453",
      asset: usdc,
    });
  });

  it("takes the official client's payment for a chat completion and a prepaid pack, exactly the quote", async () => {
    const { stack } = started;
    const payer = stack.payers[0]!;
    const paidFetch = wrapFetchWithPayment(fetch, payingClient(stack, payer.privateKey));
    const chatPrice = BigInt((await quoteOf(stack, "/v1/chat/completions", chatBody("on base"))).accepts[0]!.amount);
    const before = await balanceOf(stack, usdc, payer.address);
    const openai = new OpenAI({ apiKey: "x402", baseURL: `${stack.appUrl}/v1`, fetch: paidFetch, maxRetries: 0 });
    const completion = await openai.chat.completions.create(chatBody("on base") as never);
    expect(completion.choices[0]?.message.content).toContain("on base");
    const afterChat = await balanceOf(stack, usdc, payer.address);
    expect(before - afterChat).toBe(chatPrice);

    const pack = await paidFetch(`${stack.appUrl}/prepaid/codes/auto`, { method: "POST" });
    expect(pack.status).toBe(201);
    expect(afterChat - (await balanceOf(stack, usdc, payer.address))).toBe(8000n);
  });
});

describe("eip155:5042, whose quotes include live settlement gas", () => {
  let started: Awaited<ReturnType<typeof startNetworkStack>>;
  beforeAll(async () => {
    started = await startNetworkStack("eip155:5042");
  });
  afterAll(async () => {
    await started?.remove();
  });

  it("adds the gas part to the quote and keeps a quote payable for its lifetime when gas moves", async () => {
    const { stack } = started;
    const usdc = "0x3600000000000000000000000000000000000000" as const;
    const held = await quoteOf(stack, "/v1/chat/completions", chatBody("held quote"));
    const breakdown = held.extensions?.quote as Record<
      "settlement_gas_units" | "gas_price_wei" | "settlement_gas_usd",
      string
    >;
    expect(held.accepts[0]).toMatchObject({ network: "eip155:5042", asset: usdc });
    expect(Number(breakdown.settlement_gas_units)).toBeGreaterThan(20_000);
    expect(BigInt(breakdown.gas_price_wei)).toBeGreaterThan(0n);
    const gasAtomic = BigInt(Math.round(Number(breakdown.settlement_gas_usd) * 1e6));
    expect(gasAtomic).toBeGreaterThan(0n);
    const withoutGas = await quoteOf(started.stack, "/v1/chat/completions", chatBody("held quote"));
    expect(withoutGas.accepts).toEqual(held.accepts); // same body, same quote within its lifetime

    // Gas gets 1000 times dearer.
    const testClient = createTestClient({ mode: "anvil", transport: http(stack.chainRpcUrl) });
    await testClient.setNextBlockBaseFeePerGas({ baseFeePerGas: BigInt(breakdown.gas_price_wei) * 1000n });
    await testClient.mine({ blocks: 1 });
    const fresh = await quoteOf(stack, "/v1/chat/completions", chatBody("fresh quote"));
    const freshGas = (fresh.extensions?.quote as Record<string, string>).settlement_gas_usd;
    expect(Number(freshGas)).toBeGreaterThan(Number(breakdown.settlement_gas_usd) * 100);

    // The earlier quote is still what the signed retry must meet, and is accepted.
    const payer = stack.payers[0]!;
    const paidFetch = wrapFetchWithPayment(fetch, payingClient(stack, payer.privateKey, usdc, "eip155:5042"));
    const before = await balanceOf(stack, usdc, payer.address);
    const response = await paidFetch(`${stack.appUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chatBody("held quote")),
    });
    expect(response.status).toBe(200);
    await response.json();
    expect(before - (await balanceOf(stack, usdc, payer.address))).toBe(BigInt(held.accepts[0]!.amount));
  });

  it("sells a prepaid pack with the gas part added", async () => {
    const { stack } = started;
    const usdc = "0x3600000000000000000000000000000000000000";
    const payer = stack.payers[1]!;
    const required = await quoteOf(stack, "/prepaid/codes", { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    expect(BigInt(required.accepts[0]!.amount)).toBeGreaterThan(8000n);
    const paidFetch = wrapFetchWithPayment(fetch, payingClient(stack, payer.privateKey, usdc, "eip155:5042"));
    const response = await paidFetch(`${stack.appUrl}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens: 100_000 }),
    });
    expect(response.status).toBe(201);
  });
});
