import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { BATCH_SETTLEMENT_ADDRESS, toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import { createPublicClient, createTestClient, createWalletClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { polygon as polygonChain } from "viem/chains";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { localBatchSettlementAbi, localUsdcAbi } from "../cli/dev-stack/local-chain";
import { getNetwork, type EvmNetwork } from "../networks";
import { chainFor } from "../networks/viem-chain";
import { startNetworkStack } from "./support/network-stack";
import { decimalToAtomic } from "../server/core/money";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { paysvc } from "./support/run-paysvc";
import { channelClient } from "./support/channel-client";
import { fundedPayer } from "./support/funded-payer";
import { stack, stackFacilitator, usdcBalance } from "./support/payments";

const directory = mkdtempSync(join(tmpdir(), "paysvc-claims-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A deployment of its own (pay-to, channel authorizer, database) on the shared chain and facilitator. */
async function deployment(name: string, settings: Record<string, string>) {
  const payTo = privateKeyToAccount(generatePrivateKey()).address;
  const databasePath = join(directory, `${name}.sqlite`);
  const authorizer = generatePrivateKey();
  const log: string[] = [];
  const app = await startExtraApp(
    {
      PAY_TO: payTo,
      DATABASE_URL: `file:${databasePath}`,
      CHANNEL_AUTHORIZER_PRIVATE_KEY: authorizer,
      CHANNEL_CHECK_SECONDS: "1",
      ...settings,
    },
    { onLogLine: (line) => log.push(line) },
  );
  const rows = (sql: string) => {
    const database = new Database(databasePath, { readonly: true });
    try {
      return database.prepare(sql).all() as Record<string, unknown>[];
    } finally {
      database.close();
    }
  };
  // What `paysvc channels` reads: the app's own variables.
  const env = {
    NETWORK: "eip155:137",
    DATABASE_URL: `file:${databasePath}`,
    PAY_TO: payTo,
    CHANNEL_AUTHORIZER_PRIVATE_KEY: authorizer,
    ...stackFacilitator(),
    CHAIN_RPC_URL: stack().chainRpcUrl,
  };
  return { app, payTo, rows, log, env };
}

/** `count` calls from a new payer's channel (1 USDC deposited); what the answers say they cost, and the channel. */
async function channelCalls(url: string, count: number) {
  const payer = await fundedPayer(5_000_000n);
  const { scheme, client } = channelClient(payer.key);
  const paid = wrapFetchWithPayment(fetch, client);
  let stated = 0n;
  let channel: { channelId: string; config?: unknown } = { channelId: "" };
  for (let index = 0; index < count; index++) {
    const answer = await paid(`${url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        model: "vendor-a/gpt-6-luna",
        messages: [{ role: "user", content: `claimed ${index}` }],
        max_tokens: 40,
      }),
    });
    expect(answer.status).toBe(200);
    stated += decimalToAtomic(((await answer.json()) as { usage: { cost: string } }).usage.cost, 6);
    const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!);
    channel = (settlement.extra as { channelState: typeof channel }).channelState;
  }
  return { payer, stated, channelId: channel.channelId, scheme };
}

const tenCalls = (url: string) => channelCalls(url, 10);

describe("channels are claimed: what they were charged reaches the pay-to, to the unit", () => {
  it("claims and pays out every channel's charges when the app stops, in one claim transaction", async () => {
    const { app, payTo, rows, log } = await deployment("flush", {});
    const first = await tenCalls(app.url);
    const second = await tenCalls(app.url);
    expect(await usdcBalance(payTo)).toBe(0n);
    await app.stop();
    const claimed = rows("select * from payments where scheme = 'batch-settlement'");
    expect(claimed).toHaveLength(20);
    expect(new Set(claimed.map((row) => row.status))).toEqual(new Set(["settled"]));
    // Both channels in one claim transaction.
    const transactions = new Set(claimed.map((row) => row.transaction));
    expect(transactions.size).toBe(1);
    expect(await usdcBalance(payTo)).toBe(first.stated + second.stated);
    const channels = rows("select * from payment_channels");
    for (const channel of channels) expect(channel.total_claimed).toBe(channel.charged_cumulative_amount);
    expect(log.join("\n")).toMatch(/"event":"channels_claimed".*"why":"shutdown"/);
  });

  it("claims at once for a payer who starts to withdraw, long before the withdrawal can end", async () => {
    const { app, payTo, rows } = await deployment("withdrawal", {
      CHANNEL_CLAIM_INTERVAL_SECONDS: "40000",
      CHANNEL_CLAIM_THRESHOLD_USD: "1000",
    });
    try {
      const { payer, stated, channelId } = await tenCalls(app.url);
      const [channel] = rows(`select channel_config from payment_channels where channel_id = '${channelId}'`);
      const config = JSON.parse(channel!.channel_config as string) as Record<string, unknown>;
      const chain = { ...polygonChain, rpcUrls: { default: { http: [stack().chainRpcUrl] } } };
      const wallet = createWalletClient({
        account: privateKeyToAccount(payer.key),
        chain,
        transport: http(stack().chainRpcUrl),
      });
      await createPublicClient({ transport: http(stack().chainRpcUrl) }).waitForTransactionReceipt({
        hash: await wallet.writeContract({
          address: BATCH_SETTLEMENT_ADDRESS,
          abi: localBatchSettlementAbi,
          functionName: "initiateWithdraw",
          args: [config, 1_000_000n - stated],
        }),
      });
      await expect
        .poll(() => rows("select status from payments where status = 'charged'").length, { timeout: 20_000 })
        .toBe(0);
      await expect.poll(() => usdcBalance(payTo), { timeout: 10_000 }).toBe(stated);
    } finally {
      await app.stop();
    }
  });

  it("lists, claims and refunds channels from the command line: the payer gets back exactly what was not charged", async () => {
    const { app, payTo, env } = await deployment("cli", {
      CHANNEL_CLAIM_INTERVAL_SECONDS: "40000",
      CHANNEL_CLAIM_THRESHOLD_USD: "1000",
    });
    try {
      const kept = await tenCalls(app.url);
      const refunded = await tenCalls(app.url);
      const listed = await paysvc(["channels", "list", "--json"], 30_000, env);
      expect(listed.code, listed.stderr).toBe(0);
      const rows = JSON.parse(listed.stdout) as {
        channel: string;
        deposit: string;
        charged: string;
        unclaimed: string;
      }[];
      const row = (id: string) => rows.find((entry) => entry.channel === id.toLowerCase())!;
      expect(row(kept.channelId)).toMatchObject({
        deposit: "1000000",
        charged: String(kept.stated),
        unclaimed: String(kept.stated),
      });

      const before = await usdcBalance(refunded.payer.address);
      const refund = await paysvc(["channels", "refund", refunded.channelId, "--json"], 60_000, env);
      expect(refund.code, refund.stderr).toBe(0);
      expect(JSON.parse(refund.stdout)).toMatchObject({ refunded: String(1_000_000n - refunded.stated) });
      expect((await usdcBalance(refunded.payer.address)) - before).toBe(1_000_000n - refunded.stated);

      const claim = await paysvc(["channels", "claim", "--json"], 60_000, env);
      expect(claim.code, claim.stderr).toBe(0);
      expect(JSON.parse(claim.stdout).claims).toHaveLength(1);
      expect(await usdcBalance(payTo)).toBe(kept.stated + refunded.stated);
      const after = JSON.parse((await paysvc(["channels", "list", "--json"], 30_000, env)).stdout) as typeof rows;
      expect(after.map((entry) => entry.unclaimed)).toEqual(["0"]);
      // Reconciliation reads the channel back: its rows add up to its running total, which is what is claimed.
      const reconciled = await paysvc(["ledger", "reconcile", "--all", "--json"], 60_000, env);
      expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
      const report = JSON.parse(reconciled.stdout) as { checked: number; channels: Record<string, string>[] };
      expect(report.checked).toBe(0);
      expect(report.channels).toEqual([
        expect.objectContaining({
          channel: kept.channelId.toLowerCase(),
          outcome: "agrees",
          charged: String(kept.stated),
          ledgerCharged: String(kept.stated),
          claimedOnChain: String(kept.stated),
        }),
      ]);
    } finally {
      await app.stop();
    }
  });
});

describe(
  "a payer leaves a channel: the charges are claimed before its withdrawal can end",
  { timeout: 180_000 },
  () => {
    // A chain of its own: its clock is moved past the withdrawal delay, which would expire the shared chain's payments.
    let base: Awaited<ReturnType<typeof startNetworkStack>>;
    beforeAll(async () => {
      base = await startNetworkStack("eip155:8453");
    }, 120_000);
    afterAll(async () => {
      await base?.remove();
    });

    it("claims within seconds of initiateWithdraw; after the delay the payer gets back exactly what was not charged", async () => {
      const payTo = privateKeyToAccount(generatePrivateKey()).address;
      const databasePath = join(directory, "base-withdrawal.sqlite");
      const app = await startExtraApp(
        {
          PAY_TO: payTo,
          DATABASE_URL: `file:${databasePath}`,
          CHANNEL_AUTHORIZER_PRIVATE_KEY: generatePrivateKey(),
          CHANNEL_WITHDRAW_DELAY_SECONDS: "900",
          CHANNEL_CLAIM_INTERVAL_SECONDS: "450",
          CHANNEL_CLAIM_THRESHOLD_USD: "1000",
          CHANNEL_CHECK_SECONDS: "1",
        },
        { over: base.deployment },
      );
      try {
        const rpcUrl = base.stack.chainRpcUrl!;
        const payer = base.stack.payers[0]!;
        const account = privateKeyToAccount(payer.privateKey as `0x${string}`);
        const usdc = getNetwork("eip155:8453").usdc.address as `0x${string}`;
        const chain = createPublicClient({ transport: http(rpcUrl) });
        const balance = (address: string) =>
          chain.readContract({
            address: usdc,
            abi: localUsdcAbi,
            functionName: "balanceOf",
            args: [address],
          }) as Promise<bigint>;
        const scheme = new BatchSettlementEvmScheme(toClientEvmSigner(account, chain), {
          depositStrategy: () => 1_000_000n,
        });
        const client = new x402Client(
          (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
        ).register("eip155:*", scheme);
        const paid = wrapFetchWithPayment(fetch, client);
        const before = await balance(account.address);
        let charged = 0n;
        let channelId = "";
        for (let index = 0; index < 5; index++) {
          const answer = await paid(`${app.url}/v1/chat/completions`, {
            method: "POST",
            headers: { "content-type": "application/json" },
            body: JSON.stringify({
              model: "vendor-a/gpt-6-luna",
              messages: [{ role: "user", content: `leaving ${index}` }],
            }),
          });
          expect(answer.status).toBe(200);
          charged += decimalToAtomic(((await answer.json()) as { usage: { cost: string } }).usage.cost, 6);
          const settlement = decodePaymentResponseHeader(answer.headers.get("payment-response")!);
          channelId = (settlement.extra as { channelState: { channelId: string } }).channelState.channelId;
        }
        const database = () => new Database(databasePath, { readonly: true });
        const read = (sql: string) => {
          const handle = database();
          try {
            return handle.prepare(sql).all() as Record<string, unknown>[];
          } finally {
            handle.close();
          }
        };
        const [row] = read(
          `select channel_config from payment_channels where channel_id = '${channelId.toLowerCase()}'`,
        );
        const config = JSON.parse(row!.channel_config as string) as Record<string, unknown>;
        const wallet = createWalletClient({
          account,
          transport: http(rpcUrl),
          chain: chainFor(getNetwork("eip155:8453") as EvmNetwork, rpcUrl),
        });
        const send = async (functionName: "initiateWithdraw" | "finalizeWithdraw", args: unknown[]) => {
          const hash = await wallet.writeContract({
            address: BATCH_SETTLEMENT_ADDRESS,
            abi: localBatchSettlementAbi,
            functionName,
            args,
          });
          expect((await chain.waitForTransactionReceipt({ hash })).status).toBe("success");
        };
        // The payer asks for all of its deposit back, what it was charged included.
        await send("initiateWithdraw", [config, 1_000_000n]);
        await expect
          .poll(() => read("select status from payments where status = 'charged'").length, { timeout: 20_000 })
          .toBe(0);
        // The delay passes; the payer finishes leaving and gets back only what was not charged.
        const test = createTestClient({ mode: "anvil", transport: http(rpcUrl) });
        await test.increaseTime({ seconds: 901 });
        await test.mine({ blocks: 1 });
        await send("finalizeWithdraw", [config]);
        expect(before - (await balance(account.address))).toBe(charged);
        await expect.poll(() => balance(payTo), { timeout: 10_000 }).toBe(charged);
      } finally {
        await app.stop();
      }
    });
  },
);

/** `paysvc ledger reconcile --json`'s account of the channel contract for a receiver, amounts as strings. */
interface PrintedPayout {
  receiver: string;
  claimed: string;
  paidOut: string;
  awaitingPayout: string;
}

/** The operator's page as a signed-in operator gets it: its HTML. */
async function operatorPage(url: string, token: string): Promise<string> {
  const signIn = await fetch(`${url}/operator/session`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ token }),
  });
  expect(signIn.status).toBe(303);
  const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
  return (await fetch(`${url}/operator`, { headers: { cookie } })).text();
}

/** The atomic units a figure of the page's channel payouts card carries (`data-atomic`). */
function payoutFigure(html: string, figure: "claimed" | "paid-out" | "awaiting-payout"): bigint | undefined {
  const found = new RegExp(`data-figure="${figure}" data-atomic="(\\d+)"`).exec(html);
  return found ? BigInt(found[1]!) : undefined;
}

/** A payout, as the channel manager sends it to the facilitator: a settle payload of type `settle`. */
const isPayout = (body: Record<string, unknown>) =>
  (body.paymentPayload as { payload?: { type?: string } } | undefined)?.payload?.type === "settle";

describe("what a channel's refund claims reaches the pay-to: the contract keeps nothing claimed", () => {
  it("30 channel calls, the payer's refund, SIGTERM: the pay-to holds exactly the answers' stated sum, and reconciliation agrees", async () => {
    const { app, payTo, rows, log, env } = await deployment("refund-then-stop", {
      CHANNEL_CLAIM_INTERVAL_SECONDS: "40000",
      CHANNEL_CLAIM_THRESHOLD_USD: "1000",
    });
    let stopped = false;
    try {
      const { payer, stated, scheme } = await channelCalls(app.url, 30);
      const before = await usdcBalance(payer.address);
      const refund = await scheme.refund(`${app.url}/v1/channels/refund`);
      expect(refund.success).toBe(true);
      expect((await usdcBalance(payer.address)) - before).toBe(1_000_000n - stated);
      await app.stop();
      stopped = true;
      expect(await usdcBalance(payTo)).toBe(stated);
      const charged = rows("select status, settled_amount from payments where scheme = 'batch-settlement'");
      expect(charged).toHaveLength(30);
      expect(new Set(charged.map((row) => row.status))).toEqual(new Set(["settled"]));
      expect(charged.reduce((sum, row) => sum + BigInt(row.settled_amount as string), 0n)).toBe(stated);
      expect(log.join("\n")).toMatch(/"event":"channel_refunded".*"payout":\{"amount":"\d+","transaction":"0x/);

      const reconciled = await paysvc(["ledger", "reconcile", "--all", "--json"], 60_000, env);
      expect(reconciled.code, reconciled.stdout + reconciled.stderr).toBe(0);
      const report = JSON.parse(reconciled.stdout) as {
        outcomes: Record<string, { count: number }>;
        channels: unknown[];
        payouts: PrintedPayout[];
      };
      expect(report.outcomes.mismatch!.count).toBe(0);
      // The refund closed the channel; the contract's account of the pay-to says all it claimed was paid out.
      expect(report.channels).toEqual([]);
      expect(report.payouts).toEqual([
        {
          receiver: expect.stringMatching(new RegExp(`^${payTo}$`, "i")),
          claimed: String(stated),
          paidOut: String(stated),
          awaitingPayout: "0",
        },
      ]);
    } finally {
      if (!stopped) await app.stop();
    }
  });

  it("a claimed sum not paid out: reconciliation reports it, the operator's page shows it, `paysvc channels claim` and the drain on SIGTERM pay it out", async () => {
    const token = "channel-payouts-operator-token-0123456789";
    const proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    const { app, payTo, log, env } = await deployment("payout-refused", {
      FACILITATOR_URL: proxy.url,
      OPERATOR_TOKEN: token,
      RECONCILE_INTERVAL_SECONDS: "1",
      CHANNEL_CLAIM_INTERVAL_SECONDS: "40000",
      CHANNEL_CLAIM_THRESHOLD_USD: "1000",
    });
    let stopped = false;
    try {
      // The refund's claim goes through; the payout after it is refused: the charges stay in the contract.
      const first = await channelCalls(app.url, 5);
      proxy.setMode({ kind: "refuse", refuse: isPayout });
      expect((await first.scheme.refund(`${app.url}/v1/channels/refund`)).success).toBe(true);
      expect(await usdcBalance(payTo)).toBe(0n);
      // The app's log reaches the test through its output pipe, a moment after the answer.
      await expect.poll(() => log.join("\n")).toMatch(/"event":"channel_payout_failed"/);

      const checked = await paysvc(["ledger", "reconcile", "--check", "--json"], 60_000, env);
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
      const held = { claimed: String(first.stated), paidOut: "0", awaitingPayout: String(first.stated) };
      expect((JSON.parse(checked.stdout) as { payouts: PrintedPayout[] }).payouts).toEqual([
        expect.objectContaining(held),
      ]);
      const text = await paysvc(["ledger", "reconcile", "--check"], 60_000, env);
      expect(text.stdout).toContain(`(${first.stated} atomic) claimed and not yet paid out`);

      // The page: the pay-to's account read now, and the background reconciliation's finding.
      const page = await operatorPage(app.url, token);
      expect(payoutFigure(page, "claimed")).toBe(first.stated);
      expect(payoutFigure(page, "paid-out")).toBe(0n);
      expect(payoutFigure(page, "awaiting-payout")).toBe(first.stated);
      await expect
        .poll(
          async () =>
            /data-outcome="awaiting-payout"[\s\S]*?data-atomic="(\d+)"/.exec(await operatorPage(app.url, token))?.[1],
          { timeout: 20_000 },
        )
        .toBe(String(first.stated));

      // Nothing to claim; the payout sends what the refund claimed.
      const claim = await paysvc(["channels", "claim", "--json"], 60_000, env);
      expect(claim.code, claim.stdout + claim.stderr).toBe(0);
      const claimed = JSON.parse(claim.stdout) as {
        claims: unknown[];
        payout: { amount: string; transaction: string };
      };
      expect(claimed.claims).toEqual([]);
      expect(claimed.payout.amount).toBe(String(first.stated));
      expect(await usdcBalance(payTo)).toBe(first.stated);
      expect(payoutFigure(await operatorPage(app.url, token), "awaiting-payout")).toBe(0n);
      const again = await paysvc(["channels", "claim"], 60_000, env);
      expect(again.code, again.stderr).toBe(0);
      expect(again.stdout).toContain("nothing held for the pay-to in the channel contract");

      // Again, and the app stops: its drain has nothing to claim, and pays out what the contract holds.
      const second = await channelCalls(app.url, 5);
      expect((await second.scheme.refund(`${app.url}/v1/channels/refund`)).success).toBe(true);
      expect(await usdcBalance(payTo)).toBe(first.stated);
      proxy.setMode({ kind: "forward" });
      await app.stop();
      stopped = true;
      expect(await usdcBalance(payTo)).toBe(first.stated + second.stated);
      expect(log.join("\n")).toMatch(
        new RegExp(
          `"event":"channels_claimed".*"why":"shutdown".*"payout":\\{"transaction":"0x[0-9a-f]+","amount":"${second.stated}"`,
        ),
      );
      const reconciled = await paysvc(["ledger", "reconcile", "--check", "--json"], 60_000, env);
      expect((JSON.parse(reconciled.stdout) as { payouts: PrintedPayout[] }).payouts).toEqual([
        expect.objectContaining({ awaitingPayout: "0", paidOut: String(first.stated + second.stated) }),
      ]);
    } finally {
      if (!stopped) await app.stop();
      await proxy.stop();
    }
  });
});
