import { decodePaymentResponseHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import { balances, chatBody, payingOpenAI, postJson, quote, stack } from "./support/payments";

describe("paid chat completions through the official openai SDK and x402 client", () => {
  it("answers a chat completion and moves exactly the quoted amount from payer to pay-to", async () => {
    const payer = stack().payers[0]!;
    const body = chatBody("What is a payment gateway?");
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const before = await balances(payer.address);

    const openai = payingOpenAI(payer.privateKey);
    const { data: completion, response } = await openai.chat.completions.create(body as never).withResponse();

    expect(completion.object).toBe("chat.completion");
    expect(completion.model).toBe("vendor-a/gpt-6-luna");
    expect(completion.choices[0]?.message.role).toBe("assistant");
    expect(completion.choices[0]?.message.content).toContain("What is a payment gateway?");
    expect(completion.usage?.total_tokens).toBe(completion.usage!.prompt_tokens + completion.usage!.completion_tokens);
    const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
    expect(settlement.success).toBe(true);
    expect(settlement.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(response.headers.get("server-timing")).toMatch(/verify;dur=.*settle;dur=/);

    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("streams a chat completion that the SDK assembles, settled for exactly the quote", async () => {
    const payer = stack().payers[0]!;
    const body = chatBody("Stream me a story", { stream: true, stream_options: { include_usage: true } });
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const before = await balances(payer.address);

    const openai = payingOpenAI(payer.privateKey);
    const stream = openai.chat.completions.stream(body as never);
    const chunks: unknown[] = [];
    stream.on("chunk", (chunk) => chunks.push(chunk));
    const final = await stream.finalChatCompletion();

    expect(final.choices[0]?.message.content).toContain("Stream me a story");
    expect(final.choices[0]?.finish_reason).toBe("stop");
    expect(chunks.length).toBeGreaterThan(3);
    const usageChunk = chunks.at(-1) as { choices: unknown[]; usage?: { total_tokens: number } };
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage?.total_tokens).toBeGreaterThan(0);

    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("serves the alias /api/v1/chat/completions the same way", async () => {
    const payer = stack().payers[0]!;
    const openai = payingOpenAI(payer.privateKey, `${stack().appUrl}/api/v1`);
    const before = await balances(payer.address);
    const completion = await openai.chat.completions.create(chatBody("alias") as never);
    expect(completion.choices[0]?.message.content).toContain("alias");
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBeGreaterThan(0n);
    expect(after.payTo - before.payTo).toBe(before.payer - after.payer);
  });

  it("sends the 402 challenge with the requirements, the resource and the quote breakdown", async () => {
    const body = chatBody("price me");
    const response = await postJson("/v1/chat/completions", body);
    expect(response.status).toBe(402);
    const json = await response.json();
    expect(json.error.code).toBe("payment_required");
    const required = await quote("/v1/chat/completions", body);
    expect(required.x402Version).toBe(2);
    expect(required.resource.url).toBe(`${stack().appUrl}/v1/chat/completions`);
    const exact = {
      scheme: "exact",
      network: "eip155:137",
      amount: expect.stringMatching(/^\d+$/),
      asset: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
      payTo: stack().payTo,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    };
    // exact first, as every client pays today; then upto, the same amount as the most a whole answer may cost; then a
    // channel's voucher for at most that amount, signed for the deployment's own channel authorizer.
    expect(required.accepts).toEqual([
      exact,
      {
        ...exact,
        scheme: "upto",
        amount: required.accepts[0]!.amount,
        extra: {
          ...exact.extra,
          assetTransferMethod: "permit2",
          facilitatorAddress: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
        },
      },
      {
        ...exact,
        scheme: "batch-settlement",
        amount: required.accepts[0]!.amount,
        extra: {
          ...exact.extra,
          receiverAuthorizer: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/),
          withdrawDelay: 86_400,
          minDeposit: expect.stringMatching(/^\d+$/),
        },
      },
    ]);
    expect(required.extensions).toHaveProperty("eip2612GasSponsoring");
    // The body is x402 v1's document on Polygon (v1 clients read it): the same exact terms, in v1's names, and the
    // quote's breakdown; the protocol's other extensions (bazaar, payment-identifier, ...) are the header's alone.
    expect(json).toMatchObject({ x402Version: 1, extensions: { quote: required.extensions?.quote } });
    expect(Object.keys(json.extensions)).toEqual(["quote"]);
    expect(Object.keys(required.extensions ?? {})).toEqual(
      expect.arrayContaining(["quote", "bazaar", "payment-identifier", "eip2612GasSponsoring"]),
    );
    const [v2] = required.accepts;
    expect(json.accepts).toEqual([
      expect.objectContaining({
        network: "polygon",
        maxAmountRequired: v2!.amount,
        asset: v2!.asset,
        payTo: v2!.payTo,
        maxTimeoutSeconds: v2!.maxTimeoutSeconds,
        extra: v2!.extra,
        resource: required.resource.url,
      }),
    ]);
    const breakdown = required.extensions?.quote as Record<string, unknown>;
    expect(breakdown).toMatchObject({
      model: "vendor-a/gpt-6-luna",
      max_output_tokens: 64,
      input_usd_per_1m: "0.07",
      output_usd_per_1m: "0.35",
      settlement_overhead_usd: "0.001",
      amount: required.accepts[0]!.amount,
    });
    // Same body, same quote.
    expect((await quote("/v1/chat/completions", body)).accepts).toEqual(required.accepts);
  });
});
