import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  decodePaymentSignatureHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, BATCH_SETTLEMENT_DOMAIN, voucherTypes } from "@x402/evm";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { decimalToAtomic } from "../server/core/money";
import { channelClient } from "./support/channel-client";
import { fundedPayer } from "./support/funded-payer";
import { polygon, quote, stack, usdcBalance } from "./support/payments";

const MODEL = "vendor-a/gpt-6-luna";

function ledgerRows(payer: string): Record<string, unknown>[] {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select * from payments where payer = ? and scheme = 'batch-settlement' order by id")
      .all(payer.toLowerCase()) as Record<string, unknown>[];
  } finally {
    database.close();
  }
}

/** The payer's channel rows once `count` are written: a charge's row is written beside its answer, not before it. */
async function rowsOnceWritten(payer: string, count: number): Promise<Record<string, unknown>[]> {
  await expect.poll(() => ledgerRows(payer).length).toBe(count);
  return ledgerRows(payer);
}

function channelRow(channelId: string): Record<string, unknown> | undefined {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database.prepare("select * from payment_channels where channel_id = ?").get(channelId.toLowerCase()) as
      Record<string, unknown> | undefined;
  } finally {
    database.close();
  }
}

/** POSTs a chat request through `send` (a paying fetch, or plain fetch with a payment header). */
function post(send: typeof fetch, body: unknown, headers: Record<string, string> = {}, signal?: AbortSignal) {
  return send(`${stack().appUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
    signal,
  });
}

/** A channel payment's header again, its voucher for `channelId` and `maxClaimableAmount`, signed by `key`. */
async function resigned(payment: PaymentPayload, key: `0x${string}`, channelId: `0x${string}`, max: bigint) {
  const signature = await privateKeyToAccount(key).signTypedData({
    domain: { ...BATCH_SETTLEMENT_DOMAIN, chainId: polygon.chainId, verifyingContract: BATCH_SETTLEMENT_ADDRESS },
    types: voucherTypes,
    primaryType: "Voucher",
    message: { channelId, maxClaimableAmount: max },
  });
  const inner = payment.payload as { voucher: Record<string, unknown> };
  const voucher = { ...inner.voucher, channelId, maxClaimableAmount: max.toString(), signature };
  return encodePaymentSignatureHeader({ ...payment, payload: { ...inner, voucher } });
}

const chat = (content: string) => ({ model: MODEL, messages: [{ role: "user" as const, content }], max_tokens: 60 });

describe("x402 batch-settlement: many paid calls from one channel", () => {
  it("offers a channel beside exact and upto, for at most the quote per request", async () => {
    const required = await quote("/v1/chat/completions", chat("offer"));
    const channel = required.accepts.find((entry) => entry.scheme === "batch-settlement");
    expect(channel).toMatchObject({ amount: required.accepts[0]!.amount, payTo: required.accepts[0]!.payTo });
    expect(channel!.extra).toMatchObject({ receiverAuthorizer: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
  });

  it("charges 20 calls to one channel: one deposit on chain, each call its tokens, the total exact", async () => {
    const payer = await fundedPayer(20_000_000n);
    const before = await usdcBalance(payer.address);
    const { client } = channelClient(payer.key);
    const openai = new OpenAI({
      apiKey: "x402",
      baseURL: `${stack().appUrl}/v1`,
      fetch: wrapFetchWithPayment(fetch, client),
      maxRetries: 0,
    });
    let stated = 0n;
    let channelId = "";
    for (let index = 0; index < 20; index++) {
      const { data, response } = await openai.chat.completions.create(chat(`channel call ${index}`)).withResponse();
      const usage = data.usage as unknown as { cost: string };
      stated += decimalToAtomic(usage.cost, 6);
      const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
      channelId = (settlement.extra as { channelState: { channelId: string } }).channelState.channelId;
    }
    const deposited = before - (await usdcBalance(payer.address));
    expect(deposited).toBeGreaterThan(stated);
    const rows = await rowsOnceWritten(payer.address, 20);
    expect(rows.every((row) => row.status === "charged")).toBe(true);
    expect(rows.reduce((sum, row) => sum + BigInt(row.settled_amount as string), 0n)).toBe(stated);
    // One transaction: the deposit, with the first call.
    expect(rows.filter((row) => row.transaction !== null)).toHaveLength(1);
    const channel = channelRow(channelId)!;
    expect(BigInt(channel.charged_cumulative_amount as string)).toBe(stated);
    expect(BigInt(channel.balance as string)).toBe(deposited);
  });

  it("charges a stream at its usage event, a stream cut short what it passed on, a failed call nothing", async () => {
    const payer = await fundedPayer(5_000_000n);
    const { client } = channelClient(payer.key);
    const openai = new OpenAI({
      apiKey: "x402",
      baseURL: `${stack().appUrl}/v1`,
      fetch: wrapFetchWithPayment(fetch, client),
      maxRetries: 0,
    });
    const streamed = await openai.chat.completions.create({
      ...chat("a streamed channel call"),
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: { cost?: string } | undefined;
    for await (const chunk of streamed) usage = (chunk.usage as typeof usage) ?? usage;
    const streamedCost = decimalToAtomic(usage!.cost!, 6);
    const afterStream = await rowsOnceWritten(payer.address, 1);
    expect(afterStream.map((row) => BigInt(row.settled_amount as string))).toEqual([streamedCost]);

    // The upstream fails: the channel is let go of, nothing charged, and the next call is served from it at once.
    await expect(openai.chat.completions.create(chat("[paysvc-dev-fault:http-error] fail me"))).rejects.toMatchObject({
      status: 502,
    });
    const broken = await openai.chat.completions.create({
      ...chat("[paysvc-dev-fault:break-mid-stream] break me"),
      max_tokens: 400,
      stream: true,
    });
    const chunks: unknown[] = [];
    await expect(
      (async () => {
        for await (const chunk of broken) chunks.push(chunk);
      })(),
    ).rejects.toThrow();
    expect(chunks.length).toBeGreaterThan(0);
    await openai.chat.completions.create(chat("served after a failure"));
    const rows = await rowsOnceWritten(payer.address, 3);
    const channelId = String(rows[0]!.nonce).split(":")[0]!;
    const charged = rows.reduce((sum, row) => sum + BigInt(row.settled_amount as string), 0n);
    // The broken stream was charged less than its quote's maximum: what it passed on.
    expect(BigInt(channelRow(channelId)!.charged_cumulative_amount as string)).toBe(charged);
  });

  it("refuses a voucher replayed, off the running total, for another channel or by another key: nothing free", async () => {
    const payer = await fundedPayer(5_000_000n);
    const { client } = channelClient(payer.key);
    const sent: string[] = [];
    const recording: typeof fetch = (input, init) => {
      const header = new Headers(init?.headers ?? (input instanceof Request ? input.headers : {})).get(
        "payment-signature",
      );
      if (header) sent.push(header);
      return fetch(input, init);
    };
    const paid = wrapFetchWithPayment(recording, client);
    const body = chat("refusals");
    expect((await post(paid, body)).status).toBe(200);
    expect((await post(paid, body)).status).toBe(200);
    const voucher = decodePaymentSignatureHeader(sent.at(-1)!);
    const { channelId } = (voucher.payload as { voucher: { channelId: `0x${string}` } }).voucher;
    const charged = () => BigInt(channelRow(channelId)!.charged_cumulative_amount as string);
    const before = charged();
    const next = before + BigInt(voucher.accepted.amount);
    const attempts = {
      replayed: sent.at(-1)!,
      above: await resigned(voucher, payer.key, channelId, next + 1n),
      below: await resigned(voucher, payer.key, channelId, next - 1n),
      "another key": await resigned(voucher, generatePrivateKey(), channelId, next),
      "another channel": await resigned(voucher, payer.key, `0x${"ab".repeat(32)}`, next),
    };
    for (const [what, header] of Object.entries(attempts)) {
      const answer = await post(fetch, body, { "PAYMENT-SIGNATURE": header });
      expect(answer.status, what).toBe(402);
      const json = (await answer.json()) as { choices?: unknown };
      expect(json.choices, what).toBeUndefined();
      const reason = decodePaymentRequiredHeader(answer.headers.get("payment-required")!).error;
      expect(reason, what).toMatch(/^invalid_batch_settlement_evm_/);
      if (what !== "another key" && what !== "another channel") {
        expect(reason, what).toBe("invalid_batch_settlement_evm_cumulative_amount_mismatch");
      }
    }
    expect(charged()).toBe(before);
    expect(await rowsOnceWritten(payer.address, 2)).toHaveLength(2);
    // The payer's own client goes on from where the channel is.
    expect((await post(paid, body)).status).toBe(200);
    expect(await rowsOnceWritten(payer.address, 3)).toHaveLength(3);
  });

  it("serves one call at a time per channel: a second at once is refused with channel_busy, not a 500", async () => {
    const payer = await fundedPayer(5_000_000n);
    const { client } = channelClient(payer.key);
    const paid = wrapFetchWithPayment(fetch, client);
    expect((await post(paid, chat("open the channel"))).status).toBe(200);
    const stalled = new AbortController();
    const first = await post(
      paid,
      { ...chat("[paysvc-dev-fault:stall-mid-stream] hold the channel"), max_tokens: 400, stream: true },
      {},
      stalled.signal,
    );
    expect(first.status).toBe(200);
    const reader = first.body!.getReader();
    await reader.read();
    const second = await post(paid, chat("at the same time"));
    expect(second.status).toBe(402);
    const reason = decodePaymentRequiredHeader(second.headers.get("payment-required")!).error;
    expect(reason).toBe("invalid_batch_settlement_evm_channel_busy");
    stalled.abort();
    await reader.cancel().catch(() => undefined);
    // Once the stalled call is charged what it passed on, the channel serves again.
    await expect.poll(async () => (await post(paid, chat("after the stall"))).status, { timeout: 20_000 }).toBe(200);
  });

  it("gives an agent back what its channel holds beyond its charges, with the official client's refund(url)", async () => {
    const payer = await fundedPayer(5_000_000n);
    const { scheme, client } = channelClient(payer.key);
    const paid = wrapFetchWithPayment(fetch, client);
    let stated = 0n;
    for (const index of [1, 2, 3]) {
      const answer = await post(paid, chat(`before a refund ${index}`));
      expect(answer.status).toBe(200);
      stated += decimalToAtomic(((await answer.json()) as { usage: { cost: string } }).usage.cost, 6);
    }
    const rows = await rowsOnceWritten(payer.address, 3);
    const channelId = String(rows[0]!.nonce).split(":")[0]!;
    const deposited = BigInt(channelRow(channelId)!.balance as string);
    const url = `${stack().appUrl}/v1/channels/refund`;
    // Without a refund: the channel terms. A call's voucher is no refund, and takes nothing.
    const probe = await fetch(url);
    expect(probe.status).toBe(402);
    const terms = decodePaymentRequiredHeader(probe.headers.get("payment-required")!);
    expect(terms.accepts.map((accepted) => accepted.scheme)).toEqual(["batch-settlement"]);
    const voucher = await client.createPaymentPayload(terms);
    const notRefund = await fetch(url, { headers: { "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(voucher) } });
    expect(notRefund.status).toBe(402);
    expect((await notRefund.json()).error.code).toBe("payment_mismatch");
    expect(BigInt(channelRow(channelId)!.charged_cumulative_amount as string)).toBe(stated);

    const before = await usdcBalance(payer.address);
    const payToBefore = await usdcBalance(stack().payTo);
    const settlement = await scheme.refund(url);
    expect(settlement.success).toBe(true);
    // Exactly the deposit less the charges comes back; the charges were claimed by the same transaction, and paid
    // out to the pay-to before the answer.
    expect(await usdcBalance(payer.address)).toBe(before + deposited - stated);
    expect((await usdcBalance(stack().payTo)) - payToBefore).toBe(stated);
    await expect
      .poll(() => ledgerRows(payer.address).map((row) => [row.status, row.transaction]))
      .toEqual(rows.map(() => ["settled", settlement.transaction]));
    expect(channelRow(channelId)).toBeUndefined();
    // Nothing is left to give back.
    await expect(scheme.refund(url)).rejects.toThrow(/no remaining balance|refund/i);
  });
});
