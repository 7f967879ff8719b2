import { decodePaymentResponseHeader } from "@x402/core/http";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../config/catalog/default-catalog";
import { findChatModel } from "../config/catalog/model-catalog";
import { atomicToDecimal, decimalToAtomic } from "../server/core/money";
import { balances, buyPrepaidCode, chatBody, payingOpenAI, quote, stack, type PrepaidCode } from "./support/payments";

const payer = () => stack().payers[7]!;
const luna = "vendor-a/gpt-6-luna";

/** The usage fields paysvc adds, which the SDK's types do not name. */
interface StatedUsage {
  total_tokens: number;
  cost?: string;
  cost_details?: { network: string; transaction: string | null };
  prepaid_charged_tokens?: number;
  prepaid_remaining_tokens?: number;
}
const stated = (usage: unknown) => usage as StatedUsage;

const priceOf = async (path: string, body: unknown) => BigInt((await quote(path, body)).accepts[0]!.amount);
const usd = (atomic: bigint) => atomicToDecimal(atomic, 6);
const transactionOf = (response: Response) =>
  decodePaymentResponseHeader(response.headers.get("payment-response")!).transaction;

/** Tokens of a luna key at its price: luna's input rate per token, rounded up to a whole atomic unit. */
function prepaidWorth(tokens: number): string {
  const perMillion = decimalToAtomic(findChatModel(defaultCatalog(), luna)!.inputUsdPerMillion, 6);
  return usd((BigInt(tokens) * perMillion + 999_999n) / 1_000_000n);
}

async function prepaidStatus(key: PrepaidCode) {
  const response = await fetch(key.status_url, { headers: { authorization: `Bearer ${key.code}` } });
  return ((await response.json()) as { tokens: { used: number; remaining: number } }).tokens;
}

describe("an x402-paid answer says what it cost: the settled amount and its transaction", () => {
  it("a chat completion: usage.cost, usage.cost_details.transaction and X-Paysvc-Cost", async () => {
    const body = chatBody("What did this cost?");
    const price = await priceOf("/v1/chat/completions", body);
    const before = await balances(payer().address);

    const openai = payingOpenAI(payer().privateKey);
    const { data, response } = await openai.chat.completions.create(body as never).withResponse();

    const usage = stated(data.usage);
    expect(usage.cost).toBe(usd(price));
    expect(usage.cost_details).toEqual({ network: "eip155:137", transaction: transactionOf(response) });
    expect(usage.cost_details?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(response.headers.get("x-paysvc-cost")).toBe(usd(price));
    expect(data.choices[0]?.message.content).toContain("What did this cost?");
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
  });

  it("a streamed chat completion: the cost and transaction in its final usage chunk", async () => {
    const body = {
      model: luna,
      messages: [{ role: "user" as const, content: "Stream the cost" }],
      max_tokens: 64,
      stream: true as const,
      stream_options: { include_usage: true },
    };
    const price = await priceOf("/v1/chat/completions", body);

    const openai = payingOpenAI(payer().privateKey);
    const { data: stream, response } = await openai.chat.completions.create(body).withResponse();
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);

    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    // The stream went out while its payment settled (SETTLEMENT_ORDER=overlap): no PAYMENT-RESPONSE header, the
    // transaction is in the usage chunk, which waited for it.
    expect(response.headers.get("payment-response")).toBeNull();
    expect(stated(last.usage)).toMatchObject({
      cost: usd(price),
      cost_details: { network: "eip155:137", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
    // Only the usage chunk carries it; the text arrives as before.
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null || chunk.usage === undefined)).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toContain("Stream the cost");
    expect(response.headers.get("x-paysvc-cost")).toBe(usd(price));
  });

  it("a Response, whole and streamed: usage.cost, and response.usage of response.completed", async () => {
    const body = { model: luna, input: "What does a response cost?", max_output_tokens: 100 };
    const price = await priceOf("/v1/responses", body);
    const openai = payingOpenAI(payer().privateKey);
    const { data, response } = await openai.responses.create(body).withResponse();
    expect(stated(data.usage)).toMatchObject({
      cost: usd(price),
      cost_details: { network: "eip155:137", transaction: transactionOf(response) },
    });
    expect(response.headers.get("x-paysvc-cost")).toBe(usd(price));

    const streamedPrice = await priceOf("/v1/responses", { ...body, stream: true });
    const final = await payingOpenAI(payer().privateKey).responses.stream(body).finalResponse();
    expect(stated(final.usage)).toMatchObject({
      cost: usd(streamedPrice),
      cost_details: { network: "eip155:137", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
  });
});

describe("a prepaid answer says what its tokens cost at the key's price, and what the key has left", () => {
  it("chat, whole and streamed, and Responses: cost, tokens charged and remaining agree with the key's status", async () => {
    const key = await buyPrepaidCode(payer().privateKey, { model: luna, tokens: 100_000 });
    const openai = new OpenAI({ apiKey: key.code, baseURL: key.api_base, maxRetries: 0 });
    let used = 0;
    /** The charge an answer states must be what the key's status shows it was charged, and what it has left. */
    const expectStatedCharge = async (usage: StatedUsage | undefined) => {
      const status = await prepaidStatus(key);
      expect(usage?.prepaid_charged_tokens).toBe(status.used - used);
      expect(usage?.cost).toBe(prepaidWorth(status.used - used));
      expect(usage?.prepaid_remaining_tokens).toBe(status.remaining);
      used = status.used;
      return status;
    };

    const { data, response } = await openai.chat.completions
      .create({ model: luna, messages: [{ role: "user", content: "prepaid cost" }], max_tokens: 100 })
      .withResponse();
    const usage = stated(data.usage);
    expect(usage.prepaid_charged_tokens).toBe(usage.total_tokens);
    const status = await expectStatedCharge(usage);
    expect(response.headers.get("x-paysvc-cost")).toBe(usage.cost);
    expect(response.headers.get("x-paysvc-prepaid-remaining")).toBe(String(status.remaining));
    expect(response.headers.get("payment-response")).toBeNull();

    const stream = await openai.chat.completions.create({
      model: luna,
      messages: [{ role: "user", content: "stream the prepaid cost" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const reported: StatedUsage[] = [];
    for await (const chunk of stream) if (chunk.usage) reported.push(stated(chunk.usage));
    expect(reported).toHaveLength(1);
    expect(reported[0]!.prepaid_charged_tokens).toBe(reported[0]!.total_tokens);
    await expectStatedCharge(reported[0]);

    const whole = await openai.responses.create({ model: luna, input: "responses prepaid cost" }).withResponse();
    await expectStatedCharge(stated(whole.data.usage));
    expect(whole.response.headers.get("x-paysvc-prepaid-remaining")).toBe(
      String(stated(whole.data.usage).prepaid_remaining_tokens),
    );

    const final = await openai.responses.stream({ model: luna, input: "streamed responses cost" }).finalResponse();
    await expectStatedCharge(stated(final.usage));
    expect(100_000 - used).toBe(stated(final.usage).prepaid_remaining_tokens);
  });
});
