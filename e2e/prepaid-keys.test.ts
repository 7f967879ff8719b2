import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { fundedPayer } from "./support/funded-payer";
import { waitFor } from "../cli/dev-stack/wait-for";
import {
  balances,
  buyPrepaidCode,
  officialPayment,
  type PrepaidCode,
  postJson,
  quote,
  stack,
} from "./support/payments";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

const DEFAULT_KEY_LIMITS = { requests_per_minute: 600, tokens_per_minute: null, concurrent: 32 };

const payer = () => stack().payers[6]!;

const buy = (body?: unknown, path = "/prepaid/codes", privateKey = payer().privateKey) =>
  buyPrepaidCode(privateKey, body, path);

async function status(code: string, base = `${stack().appUrl}/v1`) {
  const response = await fetch(`${base}/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return { status: response.status, body: await response.json() };
}

const client = (key: PrepaidCode) => new OpenAI({ apiKey: key.code, baseURL: key.api_base, maxRetries: 0 });

describe("buying a prepaid key", () => {
  it("costs tokens x the input rate + the settlement fee, and answers 201 with a usable key", async () => {
    const required = await quote("/prepaid/codes", { model: "vendor-a/gpt-5.6-sol", tokens: 1_000_000 });
    expect(required.accepts[0]!.amount).toBe("2801000");
    expect(required.extensions?.quote).toMatchObject({
      tokens_usd: "2.8",
      settlement_fee_usd: "0.001",
      total_usd: "2.801000",
    });

    const before = await balances(payer().address);
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(8000n); // 0.007 + 0.001
    expect(after.payTo - before.payTo).toBe(8000n);

    expect(key).toEqual({
      object: "prepaid_code",
      id: expect.any(Number),
      code: expect.stringMatching(/^paysvc_pk_[A-Za-z0-9_-]{43}$/),
      model: "vendor-a/gpt-6-luna",
      tokens: { total: 100_000, remaining: 100_000 },
      api_base: `${stack().appUrl}/v1`,
      status_url: `${stack().appUrl}/v1/prepaid/status`,
      // The deployment's rate limits for keys, by default (null: none).
      limits: DEFAULT_KEY_LIMITS,
    });
    expect(await status(key.code)).toEqual({
      status: 200,
      body: {
        valid: true,
        reason: "active",
        model: "vendor-a/gpt-6-luna",
        tokens: { total: 100_000, used: 0, reserved: 0, remaining: 100_000 },
        limits: DEFAULT_KEY_LIMITS,
      },
    });
    // Only the hash is stored.
    const database = new Database(stack().databasePath, { readonly: true });
    const stored = database.prepare("select * from prepaid_keys").all() as Record<string, unknown>[];
    database.close();
    expect(JSON.stringify(stored)).not.toContain(key.code.slice(10));
  });

  it("uses the defaults on /prepaid/codes/auto with no body", async () => {
    const key = await buy(undefined, "/prepaid/codes/auto");
    expect(key.model).toBe("vendor-a/gpt-6-luna");
    expect(key.tokens.total).toBe(100_000);
    const custom = await buy({ model: "vendor-a/gpt-6-sol", tokens: 200_000 }, "/prepaid/codes/auto");
    expect(custom).toMatchObject({ model: "vendor-a/gpt-6-sol", tokens: { total: 200_000 } });
  });

  it("refuses invalid models and amounts with 400 and no 402", async () => {
    for (const body of [
      { model: "vendor-a/gpt-6-luna", tokens: 0 },
      { model: "vendor-a/gpt-6-luna", tokens: 150_000 },
      { model: "vendor-a/gpt-6-luna", tokens: 1_100_000 },
      { model: "vendor-a/gpt-6-luna", tokens: "100000" },
      { model: "gpt-4o", tokens: 100_000 },
      { tokens: 100_000 },
    ]) {
      const response = await postJson("/prepaid/codes", body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.headers.get("payment-required")).toBeNull();
      expect((await response.json()).error.param).toMatch(/model|tokens/);
    }
    const auto = await postJson("/prepaid/codes/auto", { tokens: 150_000 });
    expect(auto.status).toBe(400);
  });
});

describe("using a prepaid key with the official openai SDK", () => {
  it("serves chat, streamed chat and responses, and counts input plus output tokens", async () => {
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const openai = client(key);

    const completion = await openai.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "hello prepaid" }],
      max_tokens: 100,
    });
    expect(completion.choices[0]?.message.content).toContain("hello prepaid");
    let used = (await status(key.code)).body.tokens.used;
    expect(used).toBe(completion.usage!.total_tokens);

    const stream = await openai.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "stream prepaid" }],
      stream: true,
    });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.some((chunk) => chunk.usage)).toBe(false); // usage was only asked for billing
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? "").join("")).toContain("stream prepaid");
    const afterStream = (await status(key.code)).body.tokens;
    expect(afterStream.used).toBeGreaterThan(used);
    expect(afterStream.reserved).toBe(0);
    used = afterStream.used;

    // Asked for, the usage is passed on, and the key is charged exactly what it reports.
    const withUsage = await openai.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "stream prepaid with usage" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const reported = [];
    for await (const chunk of withUsage) if (chunk.usage) reported.push(chunk.usage);
    expect(reported).toHaveLength(1);
    expect((await status(key.code)).body.tokens.used).toBe(used + reported[0]!.total_tokens);
    used += reported[0]!.total_tokens;

    const response = await openai.responses.create({ model: "vendor-a/gpt-6-luna", input: "responses prepaid" });
    expect(response.output_text).toContain("responses prepaid");
    expect((await status(key.code)).body.tokens.used).toBe(used + response.usage!.total_tokens);

    const streamed = openai.responses.stream({ model: "vendor-a/gpt-6-luna", input: "streamed responses prepaid" });
    const final = await streamed.finalResponse();
    expect((await status(key.code)).body.tokens.used).toBe(
      used + response.usage!.total_tokens + final.usage!.total_tokens,
    );
  });

  // The output tokens of text the caller received, counted with gpt-tokenizer's o200k_base as the input is.
  const outputTokensOf = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
  const luna = "vendor-a/gpt-6-luna";

  it("charges a stream the caller abandons for the input and the output it was sent, and releases the rest", async () => {
    const key = await buy({ model: luna, tokens: 100_000 });
    const messages = [{ role: "user" as const, content: "[paysvc-dev-fault:stall-mid-stream] think at length" }];
    const stream = await client(key).chat.completions.create({ model: luna, messages, stream: true });
    // Read until the model goes silent halfway, then leave: everything sent so far has arrived.
    const iterator = stream[Symbol.asyncIterator]();
    let received = "";
    for (;;) {
      const next = await Promise.race([
        iterator.next(),
        new Promise<"silent">((r) => setTimeout(() => r("silent"), 500)),
      ]);
      if (next === "silent" || next.done) break;
      received += next.value.choices[0]?.delta.content ?? "";
    }
    stream.controller.abort();
    expect(received.length).toBeGreaterThan(0);
    await waitFor(async () => (await status(key.code)).body.tokens.reserved === 0, {
      timeoutMs: 5_000,
      what: "the reservation to be settled",
    });
    // The same messages, answered whole, tell the input tokens.
    const whole = await client(key).chat.completions.create({ model: luna, messages, max_tokens: 1 });
    const input = whole.usage!.prompt_tokens;
    expect((await status(key.code)).body.tokens).toMatchObject({
      used: input + outputTokensOf(received) + whole.usage!.total_tokens,
      reserved: 0,
    });
  });

  it("reads on for the usage of a stream the caller leaves once its text is complete, hidden reasoning and all", async () => {
    const key = await buy({ model: luna, tokens: 100_000 });
    const messages = [{ role: "user" as const, content: "[paysvc-dev-fault:hidden-reasoning] think, then answer" }];
    const stream = await client(key).chat.completions.create({ model: luna, messages, stream: true });
    let text = "";
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      if (chunk.choices[0]?.finish_reason) break; // leaves before the usage, which comes 300 ms later
    }
    expect(text.length).toBeGreaterThan(0);
    await waitFor(async () => (await status(key.code)).body.tokens.reserved === 0, {
      timeoutMs: 5_000,
      what: "the reservation to be settled",
    });
    // The same call answered whole reports the same usage: the text plus 100 reasoning tokens never shown.
    const whole = await client(key).chat.completions.create({ model: luna, messages });
    expect(whole.usage!.completion_tokens).toBe(outputTokensOf(text) + 100);
    expect((await status(key.code)).body.tokens).toMatchObject({ used: 2 * whole.usage!.total_tokens, reserved: 0 });
  });

  it("charges the whole reservation for a stream that ends without reporting its usage", async () => {
    const key = await buy({ model: luna, tokens: 100_000 });
    const messages = [{ role: "user" as const, content: "[paysvc-dev-fault:no-usage] say little" }];
    const stream = await client(key).chat.completions.create({ model: luna, messages, max_tokens: 500, stream: true });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(outputTokensOf(text)).toBeLessThan(100);
    const whole = await client(key).chat.completions.create({ model: luna, messages, max_tokens: 1 });
    expect((await status(key.code)).body.tokens).toMatchObject({
      used: whole.usage!.prompt_tokens + 500 + whole.usage!.total_tokens,
      reserved: 0,
    });
  });

  it("charges a stream the upstream breaks halfway for the output passed on, and nothing for one that fails first", async () => {
    const key = await buy({ model: luna, tokens: 100_000 });
    const messages = [{ role: "user" as const, content: "[paysvc-dev-fault:break-mid-stream] go" }];
    const response = await postJson(
      "/v1/chat/completions",
      { model: luna, messages, stream: true },
      { authorization: `Bearer ${key.code}` },
    );
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"code":"upstream_error"');
    const received = text
      .split("\n\n")
      .filter((event) => event.startsWith("data: {") && event.includes('"choices"'))
      .map((event) => JSON.parse(event.slice(6)).choices[0]?.delta?.content ?? "")
      .join("");
    expect(received.length).toBeGreaterThan(0);
    const whole = await client(key).chat.completions.create({ model: luna, messages, max_tokens: 1 });
    expect((await status(key.code)).body.tokens).toMatchObject({
      used: whole.usage!.prompt_tokens + outputTokensOf(received) + whole.usage!.total_tokens,
      reserved: 0,
    });

    const used = (await status(key.code)).body.tokens.used;
    for (const stream of [false, true]) {
      const failed = await postJson(
        "/v1/chat/completions",
        { model: luna, messages: [{ role: "user", content: "[paysvc-dev-fault:error-in-200]" }], stream },
        { authorization: `Bearer ${key.code}` },
      );
      expect(failed.status).toBe(502);
      expect((await failed.json()).error.message).toMatch(/no tokens were charged/);
    }
    const failedResponse = await postJson(
      "/v1/responses",
      { model: luna, input: "[paysvc-dev-fault:error-in-200]" },
      { authorization: `Bearer ${key.code}` },
    );
    expect(failedResponse.status).toBe(502);
    expect((await status(key.code)).body.tokens).toMatchObject({ used, reserved: 0 });
  });

  it("refuses another model (400), an unknown key (401), and sends other bearers to the x402 flow", async () => {
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const wrongModel = await postJson(
      "/v1/chat/completions",
      { model: "vendor-a/gpt-5.6-sol", messages: [{ role: "user", content: "x" }] },
      { authorization: `Bearer ${key.code}` },
    );
    expect(wrongModel.status).toBe(400);
    expect((await wrongModel.json()).error.message).toContain("vendor-a/gpt-6-luna");

    const body = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "x" }] };
    const unknown = await postJson("/v1/chat/completions", body, {
      authorization: "Bearer paysvc_pk_nosuchkeynosuchkeynosuchkeynosuchkey12345",
    });
    expect(unknown.status).toBe(401);
    expect((await unknown.json()).error.code).toBe("invalid_api_key");
    const placeholder = await postJson("/v1/chat/completions", body, { authorization: "Bearer x402" });
    expect(placeholder.status).toBe(402);

    expect((await status("paysvc_pk_nosuchkey")).status).toBe(401);
    expect((await fetch(`${stack().appUrl}/v1/prepaid/status`)).status).toBe(401);
  });

  it("lowers max_tokens to what the budget covers and says so", async () => {
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const response = await postJson(
      "/v1/chat/completions",
      {
        model: "vendor-a/gpt-6-luna",
        messages: [{ role: "user", content: "[paysvc-dev-long] fill" }],
        max_tokens: 128_000,
      },
      { authorization: `Bearer ${key.code}` },
    );
    expect(response.status).toBe(200);
    const lowered = Number(response.headers.get("x-prepaid-max-tokens"));
    expect(response.headers.get("x-prepaid-max-tokens-lowered-from")).toBe("128000");
    const completion = await response.json();
    expect(completion.usage.completion_tokens).toBe(lowered);
    expect(completion.usage.prompt_tokens + lowered).toBe(100_000);
    expect((await status(key.code)).body).toMatchObject({
      valid: false,
      reason: "disabled",
      tokens: { total: 100_000, used: 100_000, reserved: 0, remaining: 0 },
    });
    const afterwards = await postJson(
      "/v1/chat/completions",
      { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "more" }] },
      { authorization: `Bearer ${key.code}` },
    );
    expect(afterwards.status).toBe(429);
    expect((await afterwards.json()).error.code).toBe("insufficient_quota");
  });
});

describe("a budget under 50 concurrent requests", () => {
  it("is never overspent; every request is served or refused with 429; the key ends disabled", async () => {
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const samples: { used: number; reserved: number }[] = [];
    let polling = true;
    const poller = (async () => {
      // Back to back: the 50 calls can all be answered within a few milliseconds.
      while (polling) samples.push((await status(key.code)).body.tokens);
    })();
    const statuses = await Promise.all(
      Array.from({ length: 50 }, (_, index) =>
        postJson(
          "/v1/chat/completions",
          {
            model: "vendor-a/gpt-6-luna",
            messages: [{ role: "user", content: `[paysvc-dev-long] request ${index}` }],
            max_tokens: 30_000,
            stream: index % 2 === 0,
          },
          { authorization: `Bearer ${key.code}` },
        ).then(async (response) => {
          await response.text();
          return response.status;
        }),
      ),
    );
    polling = false;
    await poller;
    expect(statuses.every((code) => code === 200 || code === 429)).toBe(true);
    expect(statuses.filter((code) => code === 200).length).toBeGreaterThanOrEqual(4);
    expect(statuses.filter((code) => code === 429).length).toBeGreaterThan(0);
    expect(samples.length).toBeGreaterThan(3);
    for (const sample of samples) {
      expect(sample.used).toBeLessThanOrEqual(100_000);
      expect(sample.used + sample.reserved).toBeLessThanOrEqual(100_000);
    }
    expect((await status(key.code)).body).toMatchObject({
      valid: false,
      reason: "disabled",
      tokens: { total: 100_000, used: 100_000, reserved: 0, remaining: 0 },
    });
    // A new pack is a new key; the old one stays disabled.
    const fresh = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    expect((await status(fresh.code)).body.valid).toBe(true);
    expect((await status(key.code)).body.reason).toBe("disabled");
  });
});

describe("purchases that must not leave a usable key", () => {
  it("answers 503 'prepaid key issuer unavailable' and settles nothing when the key store refuses writes", async () => {
    const database = new Database(stack().databasePath);
    database.exec(
      "create trigger refuse_keys before insert on prepaid_keys begin select raise(abort, 'key store down'); end",
    );
    try {
      const body = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
      const signature = await officialPayment(payer().privateKey, await quote("/prepaid/codes", body));
      const before = await balances(payer().address);
      const response = await postJson("/prepaid/codes", body, { "PAYMENT-SIGNATURE": signature });
      expect(response.status).toBe(503);
      expect((await response.json()).error.message).toMatch(/prepaid key issuer unavailable/);
      expect(await balances(payer().address)).toEqual(before);
    } finally {
      database.exec("drop trigger refuse_keys");
      database.close();
    }
  });

  it("leaves the key void when settlement fails after verification", async () => {
    // The payer's funds leave between the facilitator's verify and its settle: the settlement fails.
    const proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    const app = await startExtraApp({ FACILITATOR_URL: proxy.url });
    try {
      const body = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
      const required = await quote("/prepaid/codes", body, app.url);
      const owner = await fundedPayer(BigInt(required.accepts[0]!.amount));
      const signature = await officialPayment(owner.key, required);
      proxy.setMode({ kind: "gate" });
      const buying = postJson("/prepaid/codes", body, { "PAYMENT-SIGNATURE": signature }, app.url);
      await proxy.settleAtGate(owner.address);
      await owner.drain();
      proxy.openGate();
      const response = await buying;
      expect(response.status).toBe(402);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("settlement_failed");
    } finally {
      await app.stop();
      await proxy.stop();
    }
    const database = new Database(stack().databasePath, { readonly: true });
    const pending = database.prepare("select count(*) as count from prepaid_keys where status = 'pending'").get() as {
      count: number;
    };
    const voided = database.prepare("select count(*) as count from prepaid_keys where status = 'void'").get() as {
      count: number;
    };
    database.close();
    expect(pending.count).toBe(0);
    expect(voided.count).toBeGreaterThanOrEqual(1);
  });
});

describe("keys survive a restart", () => {
  let restarted: Awaited<ReturnType<typeof startExtraApp>> | undefined;
  afterAll(() => restarted?.stop());

  it("a new app process over the same database sees the same keys and counters", async () => {
    const key = await buy({ model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    await client(key).chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "before restart" }],
    });
    const before = (await status(key.code)).body;
    restarted = await startExtraApp();
    expect((await status(key.code, `${restarted.url}/v1`)).body).toEqual(before);
    const openai = new OpenAI({ apiKey: key.code, baseURL: `${restarted.url}/v1`, maxRetries: 0 });
    await openai.chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "after restart" }],
    });
    expect((await status(key.code)).body.tokens.used).toBeGreaterThan(before.tokens.used);
  });
});
