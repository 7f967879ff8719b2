import { decodePaymentResponseHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { paysvc } from "./support/run-paysvc";
import { defaultCatalog } from "../config/catalog/default-catalog";
import { atomicToDecimal, decimalToAtomic } from "../server/core/money";
import { countTextTokens } from "../server/pricing/count-tokens";
import { startExtraApp } from "./support/extra-app";
import { fundedPayer } from "./support/funded-payer";
import {
  balances,
  payingOpenAI,
  postJson,
  quote,
  stack,
  stackFacilitator,
  uptoPaymentClient,
  usdcBalance,
} from "./support/payments";

// The payer no other file uses for upto: its USDC has not approved Permit2 when this file starts, so its first
// payment carries an EIP-2612 permit (the 402's eip2612GasSponsoring extension), applied by the facilitator.
const payer = () => stack().payers[2]!;
const model = defaultCatalog().chat.find((chat) => chat.id === "vendor-a/gpt-5.6-sol")!;

function uptoOpenAI(privateKey: `0x${string}`): OpenAI {
  return new OpenAI({
    apiKey: "x402-no-key-needed",
    baseURL: `${stack().appUrl}/v1`,
    fetch: wrapFetchWithPayment(fetch, uptoPaymentClient(privateKey)),
    maxRetries: 0,
  });
}

/**
 * The upto client with a way to leave a stream mid-way: the answer's body is read through a reader the test holds,
 * and leaving cancels it, which closes the connection. (The SDK's AbortSignal reaches the socket through the payment
 * wrapper's copies of the request, which undici links to one another by weak references: after a garbage collection
 * on a busy machine the abort was lost, and the test read on forever while the service waited for the caller.)
 */
function leavableUptoOpenAI(privateKey: `0x${string}`): { openai: OpenAI; leave: () => void } {
  let leave = () => {};
  const held: typeof fetch = async (input, init) => {
    const response = await fetch(input, init);
    if (response.status !== 200 || !response.body) return response;
    const reader = response.body.getReader();
    leave = () => void reader.cancel().catch(() => undefined);
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
  const openai = new OpenAI({
    apiKey: "x402-no-key-needed",
    baseURL: `${stack().appUrl}/v1`,
    fetch: wrapFetchWithPayment(held, uptoPaymentClient(privateKey)),
    maxRetries: 0,
  });
  return { openai, leave: () => leave() };
}

/** What the tokens used cost: counted input and reported output at the model's rates, rounded up once, plus the overhead. */
function usedPrice(inputTokens: number, outputTokens: number): bigint {
  const scaled =
    BigInt(inputTokens) * decimalToAtomic(model.inputUsdPerMillion, 6) +
    BigInt(outputTokens) * decimalToAtomic(model.outputUsdPerMillion, 6);
  return (scaled + 999_999n) / 1_000_000n + decimalToAtomic("0.001", 6);
}

function ledgerRowById(id: unknown): Record<string, unknown> | undefined {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database.prepare("select * from payments where id = ?").get(id) as Record<string, unknown> | undefined;
  } finally {
    database.close();
  }
}

function ledgerRowByPayer(payerAddress: string): Record<string, unknown> | undefined {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select * from payments where payer = ? and scheme = 'upto' order by id desc limit 1")
      .get(payerAddress.toLowerCase()) as Record<string, unknown> | undefined;
  } finally {
    database.close();
  }
}

const body = (content: string, extra: Record<string, unknown> = {}) => ({
  model: model.id,
  messages: [{ role: "user", content }],
  max_tokens: 4000,
  ...extra,
});

describe("x402 upto: a whole answer is charged the tokens it used", () => {
  it("charges a short chat completion its tokens, far below the quote, and says so everywhere", async () => {
    const request = body("What does upto mean?");
    const required = await quote("/v1/chat/completions", request);
    const maximum = BigInt(required.accepts[1]!.amount);
    const inputTokens = (required.extensions?.quote as { input_tokens: number }).input_tokens;
    const before = await balances(payer().address);

    const { data: completion, response } = await uptoOpenAI(payer().privateKey)
      .chat.completions.create(request as never)
      .withResponse();

    const price = usedPrice(inputTokens, completion.usage!.completion_tokens);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
    expect(price * 10n).toBeLessThan(maximum);
    const cost = atomicToDecimal(price, 6);
    expect((completion.usage as unknown as { cost: string }).cost).toBe(cost);
    expect(response.headers.get("x-paysvc-cost")).toBe(cost);
    const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
    expect(settlement).toMatchObject({ success: true, network: "eip155:137" });
    // A whole answer's settlement is recorded right after the answer leaves.
    await expect.poll(() => ledgerRowByPayer(payer().address)?.status).toBe("settled");
    expect(ledgerRowByPayer(payer().address)).toMatchObject({
      scheme: "upto",
      status: "settled",
      amount: maximum.toString(),
      settled_amount: price.toString(),
      transaction: settlement.transaction,
    });
  });

  it("charges the same request paid with exact its whole quote, as before", async () => {
    const request = body("What does exact mean?");
    const price = BigInt((await quote("/v1/chat/completions", request)).accepts[0]!.amount);
    const before = await balances(payer().address);
    await payingOpenAI(payer().privateKey).chat.completions.create(request as never);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
  });

  it("charges a Responses answer its output tokens", async () => {
    const request = { model: model.id, input: "Describe a harbor in a line", max_output_tokens: 3000 };
    const required = await quote("/v1/responses", request);
    expect(required.accepts.map((entry) => entry.scheme)).toEqual(["exact", "upto", "batch-settlement"]);
    const inputTokens = (required.extensions?.quote as { input_tokens: number }).input_tokens;
    const before = await balances(payer().address);
    const response = await uptoOpenAI(payer().privateKey).responses.create(request as never);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(usedPrice(inputTokens, response.usage!.output_tokens));
  });

  it("settles a stream on its usage event, which states the cost and the transaction", async () => {
    const request = body("Stream me something short", { stream: true, stream_options: { include_usage: true } });
    const required = await quote("/v1/chat/completions", request);
    expect(required.accepts.map((entry) => entry.scheme)).toEqual(["exact", "upto", "batch-settlement"]);
    const inputTokens = (required.extensions?.quote as { input_tokens: number }).input_tokens;
    const before = await balances(payer().address);

    const chunks: {
      choices: unknown[];
      usage?: { completion_tokens: number; cost?: string; cost_details?: unknown };
    }[] = [];
    const stream = uptoOpenAI(payer().privateKey).chat.completions.stream(request as never);
    stream.on("chunk", (chunk) => chunks.push(chunk as never));
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]?.message.content).toContain("Stream me something short");

    const usageChunk = chunks.at(-1)!;
    expect(usageChunk.choices).toEqual([]);
    const price = usedPrice(inputTokens, usageChunk.usage!.completion_tokens);
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
    expect(usageChunk.usage).toMatchObject({
      cost: atomicToDecimal(price, 6),
      cost_details: { network: "eip155:137", transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) },
    });
    expect(ledgerRowByPayer(payer().address)).toMatchObject({ status: "settled", settled_amount: price.toString() });
  });

  it("settles a stream whose caller did not ask for usage on the usage it hid, at its end", async () => {
    const request = body("Stream without usage", { stream: true });
    const inputTokens = ((await quote("/v1/chat/completions", request)).extensions?.quote as { input_tokens: number })
      .input_tokens;
    const before = await balances(payer().address);
    const chunks: { choices: unknown[]; usage?: unknown }[] = [];
    const stream = uptoOpenAI(payer().privateKey).chat.completions.stream(request as never);
    stream.on("chunk", (chunk) => chunks.push(chunk as never));
    await stream.finalChatCompletion();
    expect(chunks.every((chunk) => chunk.choices.length > 0)).toBe(true);
    const row = ledgerRowByPayer(payer().address)!;
    const charged = before.payer - (await balances(payer().address)).payer;
    expect(row).toMatchObject({ status: "settled", settled_amount: charged.toString() });
    // The development provider reports as many output tokens as the text it streams counts.
    const text = chunks.map((chunk) => (chunk.choices[0] as { delta?: { content?: string } }).delta?.content ?? "");
    expect(charged).toBe(usedPrice(inputTokens, countTextTokens(text.join(""))));
  });

  it("charges a stream broken before its usage the output it passed on, counted as the input is", async () => {
    const request = body("[paysvc-dev-fault:break-mid-stream] break me", { stream: true });
    const inputTokens = ((await quote("/v1/chat/completions", request)).extensions?.quote as { input_tokens: number })
      .input_tokens;
    const before = await balances(payer().address);
    const chunks: { choices: { delta?: { content?: string } }[] }[] = [];
    const stream = uptoOpenAI(payer().privateKey).chat.completions.stream(request as never);
    stream.on("chunk", (chunk) => chunks.push(chunk as never));
    await expect(stream.finalChatCompletion()).rejects.toThrow();
    const passed = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
    expect(passed.length).toBeGreaterThan(0);
    // The caller has the error event as soon as it is sent; the settlement follows as the stream ends.
    for (let waited = 0; ledgerRowByPayer(payer().address)?.status === "verified" && waited < 5000; waited += 50) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const charged = before.payer - (await balances(payer().address)).payer;
    expect(charged).toBe(usedPrice(inputTokens, countTextTokens(passed)));
    expect(ledgerRowByPayer(payer().address)).toMatchObject({ status: "settled", settled_amount: charged.toString() });
  });

  it("charges a caller who leaves mid-stream the output passed on when the upstream reports nothing more", async () => {
    // The provider sends half its deltas, then goes silent while the caller is there.
    const request = body("[paysvc-dev-fault:stall-mid-stream] leave me", { stream: true });
    const inputTokens = ((await quote("/v1/chat/completions", request)).extensions?.quote as { input_tokens: number })
      .input_tokens;
    const before = await balances(payer().address);
    const caller = leavableUptoOpenAI(payer().privateKey);
    const stream = await caller.openai.chat.completions.create(request as never);
    let passed = "";
    const reading = (async () => {
      for await (const chunk of stream as unknown as AsyncIterable<{ choices: { delta?: { content?: string } }[] }>) {
        passed += chunk.choices[0]?.delta?.content ?? "";
      }
    })().catch(() => undefined);
    // Until the deltas have stopped for a second (the provider has gone silent), then leave.
    let seen = -1;
    while (seen !== passed.length) {
      seen = passed.length;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    caller.leave();
    await reading;
    expect(passed.length).toBeGreaterThan(0);
    // The upstream is read on for its usage for 2 s after the caller left, then the text passed on is charged.
    for (let waited = 0; ledgerRowByPayer(payer().address)?.status === "verified" && waited < 8000; waited += 100) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const charged = before.payer - (await balances(payer().address)).payer;
    expect(charged).toBe(usedPrice(inputTokens, countTextTokens(passed)));
    expect(ledgerRowByPayer(payer().address)).toMatchObject({ status: "settled", settled_amount: charged.toString() });
  });

  it("answers a retry under its payment-identifier with the first answer, charged once", async () => {
    const request = body("retry my upto");
    const required = await quote("/v1/chat/completions", request);
    const payload = await uptoPaymentClient(payer().privateKey).createPaymentPayload({
      ...required,
      accepts: [required.accepts[1]!],
    });
    appendPaymentIdentifierToExtensions(payload.extensions!, generatePaymentId("upto_"));
    const signature = encodePaymentSignatureHeader(payload);
    const before = await balances(payer().address);
    const first = await postJson("/v1/chat/completions", request, { "PAYMENT-SIGNATURE": signature });
    const firstText = await first.text();
    expect(first.status).toBe(200);
    const charged = before.payer - (await balances(payer().address)).payer;
    expect(charged).toBe(decimalToAtomic((JSON.parse(firstText) as { usage: { cost: string } }).usage.cost, 6));
    const again = await postJson("/v1/chat/completions", request, { "PAYMENT-SIGNATURE": signature });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.text()).toBe(firstText);
    expect(before.payer - (await balances(payer().address)).payer).toBe(charged);
  });

  describe("when the payer's funds are gone by the time of the settlement", () => {
    let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;
    let app: Awaited<ReturnType<typeof startExtraApp>>;
    beforeAll(async () => {
      // Settlements held by a proxy in front of the facilitator until the test has moved the funds.
      proxy = await startFacilitatorProxy(stack().facilitatorUrl);
      proxy.setMode({ kind: "gate" });
      app = await startExtraApp({ FACILITATOR_URL: proxy.url, FACILITATOR_TIMEOUT_MS: "15000" });
    });
    afterAll(async () => {
      await app?.stop();
      await proxy?.stop();
    });

    it("does not deliver a whole answer whose settlement is refused, and moves nothing", async () => {
      const request = body("my funds will be gone");
      const required = await quote("/v1/chat/completions", request, app.url);
      const owner = await fundedPayer(BigInt(required.accepts[1]!.amount));
      const payload = await uptoPaymentClient(owner.key).createPaymentPayload({
        ...required,
        accepts: [required.accepts[1]!],
      });
      const answer = postJson(
        "/v1/chat/completions",
        request,
        { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) },
        app.url,
      );
      // Verified, worked, and its settlement held: the funds leave meanwhile.
      await proxy.settleAtGate(owner.address);
      await owner.drain();
      proxy.openGate();
      const response = await answer;
      expect(response.status).toBe(402);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("settlement_failed");
      expect(await usdcBalance(owner.address)).toBe(0n);
      expect(ledgerRowByPayer(owner.address)).toMatchObject({ status: "failed", settled_amount: null });
    });

    it("records a stream's refused settlement as a debt, serves its payer settled-first, and collects it later", async () => {
      const request = body("stream, my funds will be gone", { stream: true, stream_options: { include_usage: true } });
      const required = await quote("/v1/chat/completions", request, app.url);
      const owner = await fundedPayer(BigInt(required.accepts[1]!.amount));
      const payload = await uptoPaymentClient(owner.key).createPaymentPayload({
        ...required,
        accepts: [required.accepts[1]!],
      });
      const response = await postJson(
        "/v1/chat/completions",
        request,
        { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) },
        app.url,
      );
      expect(response.status).toBe(200);
      const reading = response.text();
      await proxy.settleAtGate(owner.address);
      await owner.drain();
      proxy.openGate();
      const text = await reading;
      expect(text).toContain("data: [DONE]");
      // The usage event states no cost: nothing was settled.
      expect(text).not.toContain('"cost"');
      // A debt on record, with what the stream came to: never "unknown", which is for what we do not know.
      const row = ledgerRowByPayer(owner.address)!;
      expect(row).toMatchObject({ status: "unpaid", unpaid_amount: expect.stringMatching(/^[1-9]\d*$/) });
      expect(BigInt(row.unpaid_amount as string)).toBeLessThanOrEqual(BigInt(required.accepts[1]!.amount));
      expect(await usdcBalance(owner.address)).toBe(0n);

      // Its next upto stream, at another instance over the same ledger, is refused before any work.
      await owner.refund();
      const nextRequest = body("one more stream", { stream: true });
      const nextRequired = await quote("/v1/chat/completions", nextRequest);
      const next = await uptoPaymentClient(owner.key).createPaymentPayload({
        ...nextRequired,
        accepts: [nextRequired.accepts[1]!],
      });
      const refused = await postJson("/v1/chat/completions", nextRequest, {
        "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(next),
      });
      expect(refused.status).toBe(402);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("payer_in_debt");

      // The funds are back: reconciliation collects what the stream delivered, once.
      const { code } = await paysvc(["ledger", "reconcile"], 60_000, {
        NETWORK: "eip155:137",
        DATABASE_URL: `file:${stack().databasePath}`,
        CHAIN_RPC_URL: stack().chainRpcUrl,
        ...stackFacilitator(),
      });
      expect(code).toBe(0);
      expect(ledgerRowById(row.id)).toMatchObject({ status: "settled", settled_amount: row.unpaid_amount });
      const funded = BigInt(required.accepts[1]!.amount);
      expect(await usdcBalance(owner.address)).toBe(funded - BigInt(row.unpaid_amount as string));
    });
  });

  it("offers no upto for images, which the same client then pays with exact", async () => {
    const request = { model: "gpt-image-2", prompt: "a harbor", size: "1024x1024" };
    const image = await quote("/api/v1/images/generations", request);
    expect(image.accepts.map((entry) => entry.scheme)).toEqual(["exact", "batch-settlement"]);
    const before = await balances(payer().address);
    const pay = wrapFetchWithPayment(fetch, uptoPaymentClient(payer().privateKey));
    const response = await pay(`${stack().appUrl}/api/v1/images/generations`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(request),
    });
    expect(response.status).toBe(200);
    await response.arrayBuffer();
    expect(before.payer - (await balances(payer().address)).payer).toBe(BigInt(image.accepts[0]!.amount));
  });

  it("refuses before any work a payment whose deadline leaves less than a minute to answer and settle", async () => {
    const request = body("Refuse my late payment");
    const required = await quote("/v1/chat/completions", request);
    // Signed 250 s ago (or by a clock 250 s slow): the official client's deadline, 300 s from then, is 50 s away.
    vi.useFakeTimers({ now: Date.now() - 250_000, toFake: ["Date"] });
    let signed;
    try {
      signed = await uptoPaymentClient(payer().privateKey).createPaymentPayload({
        ...required,
        accepts: [required.accepts[1]!],
      });
    } finally {
      vi.useRealTimers();
    }
    const before = await balances(payer().address);
    const late = await postJson("/v1/chat/completions", request, {
      "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(signed),
    });
    expect(late.status).toBe(402);
    expect(((await late.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "payment_invalid",
      message: expect.stringMatching(/deadline is (4[0-9]|50) s away.*at least 60 s/),
    });
    expect(await balances(payer().address)).toEqual(before);
  });

  it("refuses a maximum below the quote before any work, and an authorization used twice, moving nothing more", async () => {
    const request = body("Refuse my lowered maximum");
    const required = await quote("/v1/chat/completions", request);
    const client = uptoPaymentClient(payer().privateKey);
    const lowered: PaymentRequired = {
      ...required,
      accepts: [{ ...required.accepts[1]!, amount: String(BigInt(required.accepts[1]!.amount) - 1n) }],
    };
    const before = await balances(payer().address);
    const low = await postJson("/v1/chat/completions", request, {
      "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(await client.createPaymentPayload(lowered)),
    });
    expect(low.status).toBe(402);
    expect(((await low.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringContaining("amount"),
    });

    const signature = encodePaymentSignatureHeader(
      await client.createPaymentPayload({ ...required, accepts: [required.accepts[1]!] }),
    );
    const first = await postJson("/v1/chat/completions", request, { "PAYMENT-SIGNATURE": signature });
    expect(first.status).toBe(200);
    const charged = before.payer - (await balances(payer().address)).payer;
    expect(charged).toBeGreaterThan(0n);
    const again = await postJson("/v1/chat/completions", request, { "PAYMENT-SIGNATURE": signature });
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    expect(before.payer - (await balances(payer().address)).payer).toBe(charged);
  });

  it("settles nothing when the provider fails", async () => {
    const request = body("[paysvc-dev-fault:http-error] fail me");
    const before = await balances(payer().address);
    await expect(uptoOpenAI(payer().privateKey).chat.completions.create(request as never)).rejects.toMatchObject({
      status: 502,
    });
    expect(await balances(payer().address)).toEqual(before);
  });

  it("offers only exact where the deployment turns upto off (X402_UPTO=off)", async () => {
    const app = await startExtraApp({ X402_UPTO: "off" });
    try {
      const required = await quote("/v1/chat/completions", body("exact only"), app.url);
      expect(required.accepts.map((entry) => entry.scheme)).toEqual(["exact"]);
      const manifest = (await (await fetch(`${app.url}/.well-known/x402`)).json()) as {
        items: { accepts: { scheme: string }[] }[];
      };
      expect(manifest.items.flatMap((item) => item.accepts.map((entry) => entry.scheme))).not.toContain("upto");
    } finally {
      await app.stop();
    }
  });

  it("describes which schemes each endpoint takes in the manifest, OpenAPI and the agents' guide", async () => {
    const manifest = (await (await fetch(`${stack().appUrl}/.well-known/x402`)).json()) as {
      items: { resource: string; accepts: { scheme: string }[] }[];
    };
    const schemes = (path: string) =>
      manifest.items.find((item) => item.resource.endsWith(path))!.accepts.map((entry) => entry.scheme);
    expect(schemes("/v1/chat/completions")).toEqual(["exact", "upto", "batch-settlement"]);
    expect(schemes("/v1/responses")).toEqual(["exact", "upto", "batch-settlement"]);
    expect(schemes("/api/v1/images/generations")).toEqual(["exact", "batch-settlement"]);
    expect(schemes("/prepaid/codes")).toEqual(["exact"]);
    const openapi = (await (await fetch(`${stack().appUrl}/openapi.json`)).json()) as {
      paths: Record<string, { post?: { "x-payment-info"?: { schemes: string[] } } }>;
    };
    expect(openapi.paths["/v1/chat/completions"]!.post!["x-payment-info"]!.schemes).toEqual([
      "exact",
      "upto",
      "batch-settlement",
    ]);
    const guide = await (await fetch(`${stack().appUrl}/AI-AGENTS.md`)).text();
    expect(guide).toContain("@x402/evm/upto/client");
    expect(guide).toContain("@x402/evm/batch-settlement/client");
  });
});
