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
import { decimalToAtomic } from "../server/money";
import { startExtraApp } from "./support/extra-app";
import { paysvc } from "./support/run-paysvc";
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

/** Ten calls from a new payer's channel (1 USDC deposited); what the answers say they cost, and the channel. */
async function tenCalls(url: string) {
  const payer = await fundedPayer(5_000_000n);
  const signer = toClientEvmSigner(
    privateKeyToAccount(payer.key),
    createPublicClient({ transport: http(stack().chainRpcUrl) }),
  );
  const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => 1_000_000n });
  const client = new x402Client(
    (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
  ).register("eip155:*", scheme);
  const paid = wrapFetchWithPayment(fetch, client);
  let stated = 0n;
  let channel: { channelId: string; config?: unknown } = { channelId: "" };
  for (let index = 0; index < 10; index++) {
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
  return { payer, stated, channelId: channel.channelId };
}

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
