import { decodePaymentResponseHeader } from "@x402/core/http";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { balances, buyPrepaidCode, chatBody, payingOpenAI, quote, stack } from "./support/payments";

/*
 * The inner loop's one end-to-end file (`npm run test:quick` runs it beside the unit tests): a paid call, a stream
 * and a prepaid call through the official clients against the real stack. The full suite runs it too.
 */
describe("smoke: the three ways a call is paid for", () => {
  it("answers an x402 payment, moving exactly the quoted amount", async () => {
    const payer = stack().payers[3]!;
    const body = chatBody("smoke: paid");
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const before = await balances(payer.address);

    const { data, response } = await payingOpenAI(payer.privateKey)
      .chat.completions.create(body as never)
      .withResponse();

    expect(data.choices[0]?.message.content).toContain("smoke: paid");
    expect(decodePaymentResponseHeader(response.headers.get("payment-response")!).success).toBe(true);
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("streams a paid answer that the SDK assembles, settled for exactly the quote", async () => {
    const payer = stack().payers[3]!;
    const body = chatBody("smoke: stream", { stream: true, stream_options: { include_usage: true } });
    const price = BigInt((await quote("/v1/chat/completions", body)).accepts[0]!.amount);
    const before = await balances(payer.address);

    const final = await payingOpenAI(payer.privateKey)
      .chat.completions.stream(body as never)
      .finalChatCompletion();

    expect(final.choices[0]?.message.content).toContain("smoke: stream");
    expect(final.choices[0]?.finish_reason).toBe("stop");
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("spends a prepaid key bought with x402, charging it the tokens used", async () => {
    const key = await buyPrepaidCode(stack().payers[3]!.privateKey, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const openai = new OpenAI({ apiKey: key.code, baseURL: key.api_base, maxRetries: 0 });

    const completion = await openai.chat.completions.create(chatBody("smoke: prepaid") as never);

    expect(completion.choices[0]?.message.content).toContain("smoke: prepaid");
    const status = await fetch(key.status_url, { headers: { authorization: `Bearer ${key.code}` } });
    const { tokens } = (await status.json()) as { tokens: { used: number; remaining: number; reserved: number } };
    expect(tokens.used).toBe(completion.usage!.total_tokens);
    expect(tokens.reserved).toBe(0);
    expect(tokens.remaining).toBe(100_000 - tokens.used);
  });
});
