import Anthropic, {
  AuthenticationError,
  BadRequestError,
  NotFoundError,
  PaymentRequiredError,
  RateLimitError,
} from "@anthropic-ai/sdk";
import { wrapFetchWithPayment } from "@x402/fetch";
import { beforeAll, describe, expect, it } from "vitest";
import { balances, buyPrepaidCode, paymentClient, postJson, quote, stack, type PrepaidCode } from "./support/payments";

/** The official Anthropic SDK against the app, paying with the official x402 fetch wrapper or a prepaid key. */

const MODEL = "vendor-a/gpt-6-luna";
const payer = () => stack().payers[7]!;

/** The SDK paying with x402: it needs some apiKey set, which, not being a prepaid key, is no key at all. */
const payingAnthropic = () =>
  new Anthropic({
    apiKey: "unused",
    baseURL: stack().appUrl,
    fetch: wrapFetchWithPayment(fetch, paymentClient(payer().privateKey)),
    maxRetries: 0,
  });

const plainAnthropic = (options: { apiKey?: string | null; authToken?: string } = {}) =>
  new Anthropic({ apiKey: "unused", ...options, baseURL: stack().appUrl, maxRetries: 0 });

const ask = (content: string, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  max_tokens: 64,
  messages: [{ role: "user" as const, content }],
  ...extra,
});

async function keyStatus(code: string) {
  const response = await fetch(`${stack().appUrl}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return (await response.json()) as { tokens: { used: number; remaining: number; reserved: number } };
}

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe("the Messages API paid with x402 through the official SDK", () => {
  it("answers a message, charged exactly the quote, its usage stating the cost", async () => {
    const body = ask("What is a payment gateway?");
    const price = BigInt((await quote("/v1/messages", body)).accepts[0]!.amount);
    const before = await balances(payer().address);

    const message = await payingAnthropic().messages.create(body);

    expect(message.type).toBe("message");
    expect(message.model).toBe(MODEL);
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content[0]).toMatchObject({ type: "text" });
    expect((message.content[0] as { text: string }).text).toContain("What is a payment gateway?");
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect((message.usage as unknown as { cost: string }).cost).toMatch(/^\d+\.\d+$/);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });

  it("streams a message that messages.stream() assembles, with the cost in message_delta's usage", async () => {
    const body = ask("Stream me a story");
    const price = BigInt((await quote("/v1/messages", body)).accepts[0]!.amount);
    const before = await balances(payer().address);

    const stream = payingAnthropic().messages.stream(body);
    const events: { type: string; usage?: unknown }[] = [];
    stream.on("streamEvent", (event) => events.push(event));
    const final = await stream.finalMessage();
    const types = events.map((event) => event.type);

    expect((final.content[0] as { text: string }).text).toContain("Stream me a story");
    expect(final.stop_reason).toBe("end_turn");
    expect(types[0]).toBe("message_start");
    expect(types).toContain("content_block_delta");
    expect(types.slice(-2)).toEqual(["message_delta", "message_stop"]);
    expect(final.usage.output_tokens).toBeGreaterThan(0);
    // The SDK's assembled message keeps Anthropic's usage fields; the event states the cost beside them.
    const delta = events.find((event) => event.type === "message_delta")!;
    expect((delta.usage as { cost?: string }).cost).toMatch(/^\d+\.\d+$/);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
  });

  it("round-trips a tool call: tool_use, then the tool_result answered with text", async () => {
    const client = payingAnthropic();
    const question = { role: "user" as const, content: "Use get_weather for Paris" };
    const first = await client.messages.create({ ...ask(""), messages: [question], tools: [weather] });
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block) => block.type === "tool_use")!;
    expect(call).toMatchObject({ type: "tool_use", name: "get_weather" });
    expect(call.input).toHaveProperty("city");

    const streamed = await client.messages
      .stream({ ...ask(""), messages: [question], tools: [weather] })
      .finalMessage();
    expect(streamed.stop_reason).toBe("tool_use");
    expect(streamed.content.find((block) => block.type === "tool_use")?.input).toEqual(call.input);

    const second = await client.messages.create({
      ...ask(""),
      tools: [weather],
      messages: [
        question,
        { role: "assistant", content: first.content },
        { role: "user", content: [{ type: "tool_result", tool_use_id: call.id, content: "Sunny, 21 C" }] },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]?.type).toBe("text");
  });

  it("counts tokens for free, as the quote counts them", async () => {
    const body = { ...ask("How many tokens is this?"), system: "Be brief.", tools: [weather] };
    const counted = await plainAnthropic().messages.countTokens({
      model: body.model,
      messages: body.messages,
      system: body.system,
      tools: body.tools,
    });
    const quoted = (await quote("/v1/messages", body)).extensions?.quote as { input_tokens: number };
    expect(counted.input_tokens).toBe(Number(quoted.input_tokens));
    const alias = await postJson("/api/v1/messages/count_tokens", { model: MODEL, messages: body.messages });
    expect(alias.status).toBe(200);
    expect(await alias.json()).toEqual({ input_tokens: expect.any(Number) });
  });

  it("answers 402 in Anthropic's form with PAYMENT-REQUIRED to a caller that does not pay", async () => {
    const error = await plainAnthropic()
      .messages.create(ask("unpaid"))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(PaymentRequiredError);
    const paymentRequired = error as PaymentRequiredError;
    expect(paymentRequired.status).toBe(402);
    expect(paymentRequired.error).toMatchObject({ type: "error", error: { type: "billing_error" } });
    expect(paymentRequired.headers?.get("payment-required")).toBeTruthy();
    // The same path with ?beta=true, as Claude Code calls it, and Anthropic's headers.
    const beta = await postJson("/v1/messages?beta=true", ask("unpaid"), {
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "claude-code-20250219",
    });
    expect(beta.status).toBe(402);
    expect(beta.headers.get("payment-required")).toBeTruthy();
    expect((await beta.json()).type).toBe("error");
  });

  it("answers errors in Anthropic's form, each the SDK's class: 400, 401, 404", async () => {
    const client = plainAnthropic();
    const badRequest = await client.messages.create(ask("x", { max_tokens: 0 })).catch((caught: unknown) => caught);
    expect(badRequest).toBeInstanceOf(BadRequestError);
    expect((badRequest as BadRequestError).error).toMatchObject({ error: { type: "invalid_request_error" } });
    const unknownModel = await client.messages
      .create(ask("x", { model: "vendor-z/no-such-model" }))
      .catch((caught: unknown) => caught);
    expect(unknownModel).toBeInstanceOf(NotFoundError);
    expect((unknownModel as NotFoundError).error).toMatchObject({ error: { type: "not_found_error" } });
    const unknownKey = await plainAnthropic({ apiKey: "paysvc_pk_nosuchkey" })
      .messages.create(ask("x"))
      .catch((caught: unknown) => caught);
    expect(unknownKey).toBeInstanceOf(AuthenticationError);
    expect((unknownKey as AuthenticationError).error).toMatchObject({ error: { type: "authentication_error" } });
  });
});

describe("the Messages API billed to a prepaid key", () => {
  let key: PrepaidCode;
  beforeAll(async () => {
    key = await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 100_000 });
  });

  it("takes the key as apiKey (x-api-key) and as authToken (bearer); the key is charged what usage states", async () => {
    const asApiKey = await plainAnthropic({ apiKey: key.code }).messages.create(ask("key as x-api-key"));
    const stream = plainAnthropic({ apiKey: null, authToken: key.code }).messages.stream(ask("key as bearer"));
    let deltaUsage: unknown;
    stream.on("streamEvent", (event) => {
      if (event.type === "message_delta") deltaUsage = event.usage;
    });
    const asToken = await stream.finalMessage();
    const stated = [asApiKey, asToken].reduce(
      (sum, message) => sum + message.usage.input_tokens + message.usage.output_tokens,
      0,
    );
    const usage = deltaUsage as { prepaid_charged_tokens: number; prepaid_remaining_tokens: number };
    expect((asApiKey.usage as unknown as { prepaid_charged_tokens: number }).prepaid_charged_tokens).toBe(
      asApiKey.usage.input_tokens + asApiKey.usage.output_tokens,
    );
    expect(usage.prepaid_charged_tokens).toBe(asToken.usage.input_tokens + asToken.usage.output_tokens);
    const status = await keyStatus(key.code);
    expect(status.tokens.used).toBe(stated);
    expect(status.tokens.reserved).toBe(0);
    expect(usage.prepaid_remaining_tokens).toBe(status.tokens.remaining);
  });

  it("answers 429 rate_limit_error (RateLimitError) once the key is used up", async () => {
    const used = await postJson(
      "/v1/chat/completions",
      { model: MODEL, messages: [{ role: "user", content: "[paysvc-dev-long] fill" }], max_tokens: 128_000 },
      { authorization: `Bearer ${key.code}` },
    );
    expect(used.status).toBe(200);
    await used.json();
    const error = await plainAnthropic({ apiKey: key.code })
      .messages.create(ask("more"))
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    expect((error as RateLimitError).error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
  });

  it("answers a key over its rate limit 429 rate_limit_error with Retry-After and the x-ratelimit headers", async () => {
    const limited = await buyPrepaidCode(payer().privateKey, {
      model: MODEL,
      tokens: 100_000,
      limits: { requests_per_minute: 1 },
    });
    const client = plainAnthropic({ apiKey: limited.code });
    const first = await client.messages.create(ask("the one call this minute")).withResponse();
    expect(first.response.headers.get("x-ratelimit-remaining-requests")).toBe("0");
    const error = await client.messages.create(ask("one too many")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateLimitError);
    const refused = error as RateLimitError;
    expect(refused.error).toMatchObject({ type: "error", error: { type: "rate_limit_error" } });
    expect(Number(refused.headers?.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(refused.headers?.get("x-ratelimit-limit-requests")).toBe("1");
    expect((await keyStatus(limited.code)).tokens.used).toBe(
      first.data.usage.input_tokens + first.data.usage.output_tokens,
    );
  });
});
