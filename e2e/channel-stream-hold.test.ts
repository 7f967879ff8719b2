import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { decimalToAtomic } from "../server/core/money";
import { startExtraApp } from "./support/extra-app";
import { channelClient } from "./support/channel-client";
import { fundedPayer } from "./support/funded-payer";
import { paidStream, statedCost } from "./support/paid-stream";
import { stack, usdcBalance } from "./support/payments";

/**
 * The scheme reserves a channel for one request for the payment's timeout: short here, yet long enough for a deposit's
 * authorization (the facilitator refuses one that expires within 6 s).
 */
const RESERVATION_SECONDS = 10;
const MODEL = "vendor-a/gpt-6-luna";

describe("a channel stream that outlives its reservation", () => {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-channel-hold-"));
  const databasePath = join(directory, "hold.sqlite");
  let upstream: LocalUpstream;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  beforeAll(async () => {
    // A provider streaming at a slow model's pace: 45 deltas 400 ms apart, 18 s, near twice the reservation.
    upstream = await startLocalUpstream({ port: 0, deltaDelayMs: 400, streamDeltas: 45 });
    app = await startExtraApp({
      PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
      DATABASE_URL: `file:${databasePath}`,
      CHANNEL_AUTHORIZER_PRIVATE_KEY: generatePrivateKey(),
      UPSTREAM_BASE_URL: `${upstream.url}/v1`,
      UPSTREAM_TIMEOUT_MS: "30000",
      PAYMENT_TIMEOUT_SECONDS: String(RESERVATION_SECONDS),
      // upto needs a payment timeout of a minute at least; this deployment sells exact and channels.
      X402_UPTO: "off",
    });
  });
  afterAll(async () => {
    await app?.stop();
    await upstream?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  const channelOf = (channelId: string) => {
    const database = new Database(databasePath, { readonly: true });
    try {
      return database.prepare("select * from payment_channels where channel_id = ?").get(channelId) as
        Record<string, string> | undefined;
    } finally {
      database.close();
    }
  };

  it("holds its channel to the end: a voucher and a refund meanwhile are refused busy, its charge is whole", async () => {
    const payer = await fundedPayer(5_000_000n);
    const { scheme, client } = channelClient(payer.key);
    const paid = wrapFetchWithPayment(fetch, client);
    const chat = (content: string, extra: Record<string, unknown> = {}) => ({
      model: MODEL,
      messages: [{ role: "user", content }],
      max_tokens: 400,
      ...extra,
    });
    const url = `${app.url}/v1/chat/completions`;
    // The channel opens (its deposit lands) with a first, whole answer.
    const opened = await paid(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat("open the channel")),
    });
    expect(opened.status, await opened.clone().text()).toBe(200);
    let stated = decimalToAtomic(((await opened.json()) as { usage: { cost: string } }).usage.cost, 6);

    const started = Date.now();
    const streaming = paidStream(
      paid,
      url,
      chat("a long stream, please", { stream: true, stream_options: { include_usage: true } }),
    );
    // Past the reservation's first lifetime, the stream still running: the channel is still this stream's.
    await new Promise((resolve) => setTimeout(resolve, (RESERVATION_SECONDS + 2) * 1000));
    const meanwhile = await paid(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chat("a smaller call meanwhile", { max_tokens: 5 })),
    });
    expect(meanwhile.status).toBe(402);
    expect(decodePaymentRequiredHeader(meanwhile.headers.get("payment-required")!).error).toBe(
      "invalid_batch_settlement_evm_channel_busy",
    );
    await expect(scheme.refund(`${app.url}/v1/channels/refund`)).rejects.toThrow(/busy/);

    const streamed = await streaming;
    expect(Date.now() - started).toBeGreaterThan(RESERVATION_SECONDS * 1000);
    if (!streamed.served) throw new Error(`the stream was refused: ${streamed.code}`);
    stated += streamed.cost;
    const rows = (() => {
      const database = new Database(databasePath, { readonly: true });
      try {
        return database
          .prepare("select nonce, settled_amount from payments where payer = ? order by id")
          .all(payer.address.toLowerCase()) as { nonce: string; settled_amount: string }[];
      } finally {
        database.close();
      }
    })();
    expect(rows.reduce((sum, row) => sum + BigInt(row.settled_amount), 0n)).toBe(stated);
    const channel = channelOf(rows[0]!.nonce.split(":")[0]!)!;
    expect(BigInt(channel.charged_cumulative_amount!)).toBe(stated);

    // Once the stream is charged, the refund goes through and returns exactly the deposit less the charges.
    const before = await usdcBalance(payer.address);
    const refund = await scheme.refund(`${app.url}/v1/channels/refund`);
    expect(refund.success).toBe(true);
    expect(await usdcBalance(payer.address)).toBe(before + 1_000_000n - stated);
  });
});

describe("channel deposits paid with a stream", () => {
  it("holds a deposit against the payer's balance until it lands: two at once from funds for one, one is served", async () => {
    const payer = await fundedPayer(1_000_000n);
    // Two channels of one payer (two salts), each opened with a deposit of everything it holds.
    const clients = ["01", "02"].map(
      (salt) => channelClient(payer.key, { salt: `0x${salt.padStart(64, "0")}` }).client,
    );
    const request = {
      model: MODEL,
      messages: [{ role: "user", content: "open my channel with a stream" }],
      max_tokens: 60,
      stream: true,
      stream_options: { include_usage: true },
    };
    const url = `${stack().appUrl}/v1/chat/completions`;

    const outcomes = await Promise.all(
      clients.map((client) => paidStream(wrapFetchWithPayment(fetch, client), url, request)),
    );

    const served = outcomes.filter((outcome) => outcome.served);
    expect(served).toHaveLength(1);
    expect(outcomes.find((outcome) => !outcome.served)).toEqual({
      served: false,
      status: 402,
      code: "payer_limit_exceeded",
    });
    // The one served deposited its 1 USDC, and was charged what its usage event stated.
    expect(await usdcBalance(payer.address)).toBe(0n);
    const database = new Database(stack().databasePath, { readonly: true });
    try {
      const rows = database
        .prepare("select status, settled_amount from payments where payer = ? and scheme = 'batch-settlement'")
        .all(payer.address.toLowerCase()) as { status: string; settled_amount: string }[];
      expect(rows.map((row) => row.status)).toEqual(["charged"]);
      expect(BigInt(rows[0]!.settled_amount)).toBe(statedCost(outcomes));
    } finally {
      database.close();
    }
  });
});
