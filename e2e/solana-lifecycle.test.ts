import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  getBase58Encoder,
  mainnet,
  type Address,
  type Signature,
} from "@solana/kit";
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { loadLaunchConfig } from "../config/dev-launch-config";
import { startStack, type RunningStack } from "../cli/dev-stack/start-stack";
import { FREE_PORTS } from "./support/free-ports";
import { chatBody } from "./support/network-stack";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" as Address;

const running: RunningStack[] = [];
const dataDirs: string[] = [];

afterEach(async () => {
  for (const stack of running.splice(0)) await stack.stop();
  for (const dir of dataDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function newDataDir(): string {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-solana-lifecycle-"));
  dataDirs.push(dataDir);
  return dataDir;
}

const journalIn = (dataDir: string) => join(dataDir, "chain", "solana-5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp.jsonl");

/** `NETWORK=solana:… npm start` on `dataDir`, in this process. */
async function start(dataDir: string, onLine?: (line: string) => void): Promise<RunningStack> {
  const config = loadLaunchConfig({
    NETWORK: SOLANA,
    ...FREE_PORTS,
    DATA_DIR: dataDir,
    DATABASE_URL: `file:${join(dataDir, "paysvc.sqlite")}`,
  });
  const stack = await startStack(config, { onLine });
  running.push(stack);
  return stack;
}

async function stop(stack: RunningStack): Promise<void> {
  running.splice(running.indexOf(stack), 1);
  await stack.stop();
}

/** A chat completion paid by the stack's first payer with the official SVM client: the settlement signature. */
async function payForChat(stack: RunningStack, content: string): Promise<string> {
  const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(stack.payers[0]!.privateKey));
  const client = new x402Client();
  client.register(SOLANA, new ExactSvmScheme(signer, { rpcUrl: stack.chainRpcUrl }));
  const paid = await wrapFetchWithPayment(fetch, client)(`${stack.appUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(chatBody(content)),
  });
  expect(paid.status).toBe(200);
  await paid.text();
  return decodePaymentResponseHeader(paid.headers.get("payment-response")!).transaction;
}

const usdcAccount = async (owner: string) =>
  (await findAssociatedTokenPda({ mint: USDC_MINT, owner: owner as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];

async function usdcBalance(stack: RunningStack, owner: string): Promise<bigint> {
  const rpc = createSolanaRpc(mainnet(stack.chainRpcUrl!));
  return BigInt((await rpc.getTokenAccountBalance(await usdcAccount(owner)).send()).value.amount);
}

describe("the embedded Solana validator across restarts of the stack", () => {
  it("keeps its transactions: a payment settled before a restart is still on chain, as the ledger says", async () => {
    const dataDir = newDataDir();
    const lines: string[] = [];
    const first = await start(dataDir, (line) => lines.push(line));
    expect(lines.find((line) => line.startsWith("chain"))).toContain(`state in ${journalIn(dataDir)}`);
    const signature = await payForChat(first, "before the restart");
    const payer = first.payers[0]!.address;
    const balances = { payTo: await usdcBalance(first, first.payTo), payer: await usdcBalance(first, payer) };
    await stop(first);
    expect(readFileSync(journalIn(dataDir), "utf8")).toContain(signature);

    const second = await start(dataDir);
    const rpc = createSolanaRpc(mainnet(second.chainRpcUrl!));
    const [status] = (await rpc.getSignatureStatuses([signature as Signature]).send()).value;
    expect(status).toMatchObject({ err: null, confirmationStatus: "finalized" });
    const landed = await rpc
      .getTransaction(signature as Signature, { encoding: "base64", maxSupportedTransactionVersion: 0 })
      .send();
    const payToAfter = landed?.meta?.postTokenBalances?.find((entry) => entry.owner === second.payTo);
    expect(payToAfter?.uiTokenAmount.amount).toBe(String(balances.payTo));
    // As on a node, a transfer names the pay-to's token account, not its wallet.
    const history = await rpc.getSignaturesForAddress(await usdcAccount(second.payTo), { limit: 1 }).send();
    expect(history[0]?.signature).toBe(signature);
    expect({ payTo: await usdcBalance(second, second.payTo), payer: await usdcBalance(second, payer) }).toEqual(
      balances,
    );
    const ledger = new Database(join(dataDir, "paysvc.sqlite"), { readonly: true });
    try {
      const row = ledger.prepare('select status from payments where "transaction" = ?').get(signature);
      expect(row).toEqual({ status: "settled" });
    } finally {
      ledger.close();
    }

    // The restored validator takes new payments on top of the old ones.
    const next = await payForChat(second, "after the restart");
    expect(next).not.toBe(signature);
    expect(await usdcBalance(second, second.payTo)).toBeGreaterThan(balances.payTo);
  });

  it("says which journal it cannot replay, and how to start afresh", async () => {
    const dataDir = newDataDir();
    mkdirSync(join(dataDir, "chain"));
    writeFileSync(journalIn(dataDir), "not a journal\n");
    await expect(start(dataDir)).rejects.toThrow(
      `the local Solana validator's journal ${journalIn(dataDir)} cannot be replayed (line 1 is not JSON): remove it to start a new validator`,
    );
  });
});
