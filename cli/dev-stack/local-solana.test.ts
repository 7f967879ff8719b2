import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createTransactionMessage,
  generateKeyPairSigner,
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  mainnet,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
  type Signature,
} from "@solana/kit";
import { findAssociatedTokenPda, getTransferCheckedInstruction, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getNetwork, type SvmNetwork } from "../../networks";
import { PAYER_STARTING_BALANCE } from "./dev-accounts";
import { startLocalSolana, type LocalSolana } from "./local-solana";
import { solanaDevAccount, type SolanaDevAccount } from "./solana-dev-accounts";

const network = getNetwork("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp") as SvmNetwork;
const mint = network.usdc.address as Address;
let validator: LocalSolana;
let feePayer: SolanaDevAccount;
let payTo: SolanaDevAccount;
let payer: SolanaDevAccount;
let directory: string;
/** In a directory that does not exist yet: the validator creates it. */
let stateFile: string;

const rpc = () => createSolanaRpc(mainnet(validator.rpcUrl));
const tokenAccount = async (owner: string) =>
  (await findAssociatedTokenPda({ mint, owner: owner as Address, tokenProgram: TOKEN_PROGRAM_ADDRESS }))[0];
const balance = async (owner: string) =>
  BigInt(
    (
      await rpc()
        .getTokenAccountBalance(await tokenAccount(owner))
        .send()
    ).value.amount,
  );

async function rawCall(method: string, params: unknown[], rpcUrl = validator.rpcUrl) {
  const response = await fetch(rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return (await response.json()) as { id: number; result?: unknown; error?: { code: number; message: string } };
}

/**
 * A USDC TransferChecked from the payer to the pay-to, fee paid by the fee payer, fully signed. The validator's
 * blockhash does not change: transfers of the same amount are the same transaction.
 */
async function transfer(amount: bigint, blockhash?: string): Promise<string> {
  const latest = (await rpc().getLatestBlockhash().send()).value;
  const lifetime = blockhash ? { ...latest, blockhash: blockhash as typeof latest.blockhash } : latest;
  const [source, destination] = await Promise.all([tokenAccount(payer.address), tokenAccount(payTo.address)]);
  const message = pipe(
    createTransactionMessage({ version: 0 }),
    (tx) => setTransactionMessageFeePayerSigner(feePayer.signer, tx),
    (tx) =>
      appendTransactionMessageInstruction(
        getTransferCheckedInstruction({
          source,
          mint,
          destination,
          authority: payer.signer,
          amount,
          decimals: 6,
        }),
        tx,
      ),
    (tx) => setTransactionMessageLifetimeUsingBlockhash(lifetime, tx),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

const send = async (wire: string, config: Record<string, unknown> = {}) =>
  rawCall("sendTransaction", [wire, { encoding: "base64", ...config }]);
const solBalance = async (address: string) =>
  (
    await rpc()
      .getBalance(address as Address)
      .send()
  ).value;
const randomBlockhash = () => getBase58Decoder().decode(crypto.getRandomValues(new Uint8Array(32)));

function startValidator(journal = stateFile): Promise<LocalSolana> {
  return startLocalSolana({
    network,
    port: 0,
    feePayer: feePayer.address,
    payTo: payTo.address,
    payers: [payer.address],
    stateFile: journal,
  });
}

beforeAll(async () => {
  [feePayer, payTo, payer] = await Promise.all([solanaDevAccount(0), solanaDevAccount(1), solanaDevAccount(2)]);
  directory = mkdtempSync(join(tmpdir(), "paysvc-local-solana-"));
  stateFile = join(directory, "chain", "solana-mainnet.jsonl");
  validator = await startValidator();
});
afterAll(async () => {
  await validator?.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe("the embedded Solana validator's JSON-RPC", () => {
  it("serves the USDC mint at its canonical address and the funded token accounts", async () => {
    const mintAccount = await rpc().getAccountInfo(mint, { encoding: "base64" }).send();
    expect(mintAccount.value?.owner).toBe(TOKEN_PROGRAM_ADDRESS);
    expect(await balance(payer.address)).toBe(PAYER_STARTING_BALANCE);
    expect(await balance(payTo.address)).toBe(0n);
    expect(await rpc().getGenesisHash().send()).toBe(network.genesisHash);
  });

  it("lands a transfer once, and refuses the same transaction sent again", async () => {
    const wire = await transfer(1234n);
    const signature = await rpc()
      .sendTransaction(wire as never, { encoding: "base64" })
      .send();
    const [status] = (await rpc().getSignatureStatuses([signature]).send()).value;
    expect(status).toMatchObject({ err: null, confirmationStatus: "finalized" });
    expect(await balance(payTo.address)).toBe(1234n);

    const replay = await rawCall("sendTransaction", [wire, { encoding: "base64" }]);
    expect(replay.error?.code).toBe(-32002);
    expect(replay.error?.message).toMatch(/AlreadyProcessed|already/i);
    expect(await balance(payTo.address)).toBe(1234n);
  });

  it("refuses a transaction whose payer signature does not match, and one that overdraws", async () => {
    const wire = Buffer.from(await transfer(1n), "base64");
    wire[1 + 64 + 10]! ^= 0xff; // a byte of the second signature (the token owner's)
    const forged = await rawCall("sendTransaction", [wire.toString("base64"), { encoding: "base64" }]);
    expect(forged.error?.code).toBe(-32002);

    // Refused by its preflight, as on a node: it does not land, and the fee payer pays nothing.
    const lamportsBefore = await solBalance(feePayer.address);
    const overdraw = await rawCall("sendTransaction", [await transfer(PAYER_STARTING_BALANCE * 2n), {}]);
    expect(overdraw.error?.code).toBe(-32002);
    expect(await balance(payTo.address)).toBe(1234n);
    expect(await solBalance(feePayer.address)).toBe(lamportsBefore);
  });

  it("simulates without signatures when asked, as a node does", async () => {
    const unsigned = Buffer.from(await transfer(5n), "base64");
    unsigned.fill(0, 1, 1 + 64); // the fee payer's signature slot left empty, as the x402 client sends it
    const simulated = await rawCall("simulateTransaction", [unsigned.toString("base64"), { sigVerify: false }]);
    expect(simulated.result).toMatchObject({ value: { err: null } });
    expect(await balance(payTo.address)).toBe(1234n);
  });

  it("answers unknown methods and unsupported encodings with JSON-RPC errors", async () => {
    expect((await rawCall("getBlockProduction", [])).error?.code).toBe(-32601);
    const parsed = await rawCall("getAccountInfo", [mint, { encoding: "jsonParsed" }]);
    expect(parsed.error?.code).toBe(-32602);
    expect((await rawCall("getBalance", ["not-an-address"])).error?.code).toBe(-32602);
  });
});

interface TokenBalanceJson {
  owner: string;
  uiTokenAmount: { amount: string };
}
interface TransactionJson {
  slot: number;
  meta: {
    err: unknown;
    fee: number;
    preBalances: number[];
    postBalances: number[];
    preTokenBalances: TokenBalanceJson[];
    postTokenBalances: TokenBalanceJson[];
  };
}

const getTransaction = async (signature: string) =>
  (await rawCall("getTransaction", [signature, { encoding: "base64", maxSupportedTransactionVersion: 0 }]))
    .result as TransactionJson | null;
const history = async (address: string, config: Record<string, unknown> = {}) =>
  (await rawCall("getSignaturesForAddress", [address, config])).result as { signature: string; slot: number }[];
const signaturesOf = async (address: string, config: Record<string, unknown> = {}) =>
  (await history(address, config)).map((entry) => entry.signature);
const tokenAmounts = (balances: TokenBalanceJson[]) =>
  Object.fromEntries(balances.map((entry) => [entry.owner, BigInt(entry.uiTokenAmount.amount)]));
const journalLines = () =>
  readFileSync(stateFile, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as { signature: string; transaction: string; err: unknown });

describe("what a ledger reconciler asks the embedded validator", () => {
  it("journals a transaction before answering, and serves it with its slot, fee and balances", async () => {
    const [payerBefore, payToBefore] = [await balance(payer.address), await balance(payTo.address)];
    const wire = await transfer(2_000n);
    const signature = (await send(wire)).result as string;
    expect(journalLines().at(-1)).toMatchObject({ signature, transaction: wire, err: null });

    const [status] = (
      await rpc()
        .getSignatureStatuses([signature as Signature])
        .send()
    ).value;
    const found = (
      await rawCall("getTransaction", [signature, { encoding: "base64", maxSupportedTransactionVersion: 0 }])
    ).result as TransactionJson;
    expect(found).toMatchObject({
      slot: Number(status!.slot),
      blockTime: expect.any(Number),
      version: 0,
      transaction: [wire, "base64"],
      meta: { err: null, status: { Ok: null }, fee: 10_000, computeUnitsConsumed: expect.any(Number) },
    });
    // Two signatures at 5,000 lamports each, taken from the fee payer (key 0).
    expect(found.meta.preBalances[0]! - found.meta.postBalances[0]!).toBe(10_000);
    expect(tokenAmounts(found.meta.preTokenBalances)).toEqual({
      [payer.address]: payerBefore,
      [payTo.address]: payToBefore,
    });
    expect(tokenAmounts(found.meta.postTokenBalances)).toEqual({
      [payer.address]: payerBefore - 2_000n,
      [payTo.address]: payToBefore + 2_000n,
    });
    expect(found.meta.postTokenBalances).toContainEqual({
      accountIndex: expect.any(Number),
      mint,
      owner: payTo.address,
      programId: TOKEN_PROGRAM_ADDRESS,
      uiTokenAmount: {
        amount: String(payToBefore + 2_000n),
        decimals: 6,
        uiAmount: Number(payToBefore + 2_000n) / 1e6,
        uiAmountString: String(Number(payToBefore + 2_000n) / 1e6),
      },
    });
    // The official client reads the same answer.
    const typed = await rpc()
      .getTransaction(signature as Signature, { encoding: "base64", maxSupportedTransactionVersion: 0 })
      .send();
    expect(typed?.meta?.fee).toBe(10_000n);

    expect(await getTransaction(getBase58Decoder().decode(new Uint8Array(64).fill(9)))).toBeNull();
    expect((await rawCall("getTransaction", [signature, { encoding: "base64" }])).error?.code).toBe(-32015);
    expect((await rawCall("getTransaction", [signature, { maxSupportedTransactionVersion: 0 }])).error?.code).toBe(
      -32602,
    );
  });

  it("lists an address's signatures newest first, within limit, before and until", async () => {
    const sent: string[] = [];
    for (const amount of [11n, 12n, 13n]) sent.push((await send(await transfer(amount))).result as string);
    const [first, second, third] = sent as [string, string, string];

    const all = await history(payer.address);
    expect(all.slice(0, 3).map((entry) => entry.signature)).toEqual([third, second, first]);
    expect(all.map((entry) => entry.slot)).toEqual(all.map((entry) => entry.slot).sort((a, b) => b - a));
    expect(all[0]).toEqual({
      signature: third,
      slot: expect.any(Number),
      err: null,
      memo: null,
      blockTime: expect.any(Number),
      confirmationStatus: "finalized",
    });
    expect(await signaturesOf(payer.address, { limit: 2 })).toEqual([third, second]);
    expect(await signaturesOf(payer.address, { before: third, limit: 1 })).toEqual([second]);
    expect(await signaturesOf(payer.address, { until: first })).toEqual([third, second]);
    expect(await signaturesOf(payer.address, { before: third, until: first })).toEqual([second]);
    // The fee payer is in every transaction; an address in none has no history.
    expect((await signaturesOf(feePayer.address)).slice(0, 3)).toEqual([third, second, first]);
    expect(await signaturesOf((await generateKeyPairSigner()).address)).toEqual([]);

    const typed = await rpc()
      .getSignaturesForAddress(payer.address as Address, { limit: 1 })
      .send();
    expect(typed[0]?.signature).toBe(third);
    expect((await rawCall("getSignaturesForAddress", [payer.address, { limit: 1001 }])).error?.code).toBe(-32602);
  });

  it("lands a failing transaction sent without preflight with its error, charging the fee, as a node does", async () => {
    const [lamportsBefore, payToBefore] = [await solBalance(feePayer.address), await balance(payTo.address)];
    const signature = (await send(await transfer(PAYER_STARTING_BALANCE * 3n), { skipPreflight: true }))
      .result as string;
    const failure = { InstructionError: [0, { Custom: 1 }] }; // the token program's InsufficientFunds
    const [status] = ((await rawCall("getSignatureStatuses", [[signature]])).result as { value: unknown[] }).value;
    expect(status).toMatchObject({ err: failure, status: { Err: failure } });
    expect((await getTransaction(signature))?.meta).toMatchObject({ err: failure, fee: 10_000 });
    expect(journalLines().at(-1)).toMatchObject({ signature, err: failure });
    expect(await solBalance(feePayer.address)).toBe(lamportsBefore - 10_000n);
    expect(await balance(payTo.address)).toBe(payToBefore);
  });

  it("says whether a blockhash would be accepted now", async () => {
    const { value: latest } = await rpc().getLatestBlockhash().send();
    expect((await rpc().isBlockhashValid(latest.blockhash).send()).value).toBe(true);
    const unknown = randomBlockhash();
    expect((await rawCall("isBlockhashValid", [unknown])).result).toMatchObject({ value: false });
    expect((await send(await transfer(77n, unknown), { skipPreflight: true })).error?.message).toMatch(
      /BlockhashNotFound/,
    );
    expect((await rawCall("isBlockhashValid", ["not-a-blockhash"])).error?.code).toBe(-32602);
  });
});

describe("the embedded validator across a restart", () => {
  it("replays its journal: statuses, transactions, histories, balances and the slot are as before", async () => {
    const signatures = await signaturesOf(feePayer.address);
    expect(signatures.length).toBeGreaterThanOrEqual(6);
    const observed = async () => ({
      statuses: (await rawCall("getSignatureStatuses", [signatures])).result,
      transactions: await Promise.all(signatures.map(getTransaction)),
      histories: [await history(payer.address), await history(payTo.address), await history(feePayer.address)],
      tokens: [await balance(payer.address), await balance(payTo.address)],
      lamports: await solBalance(feePayer.address),
      slot: await rpc().getSlot().send(),
    });
    const before = await observed();

    await validator.stop();
    validator = await startValidator();
    const after = await observed();
    expect(after).toEqual({ ...before, statuses: { ...(before.statuses as object), context: expect.anything() } });
    expect(after.statuses).toMatchObject({ context: { slot: Number(before.slot) } });

    // LiteSVM's own history is back: a transaction sent before the restart is refused as already processed.
    const [firstLanded] = journalLines();
    expect((await send(firstLanded!.transaction)).error?.message).toMatch(/AlreadyProcessed/);
    // The checks switched off for the replay are on again: stale and forged transactions are refused.
    expect((await send(await transfer(78n, randomBlockhash()), { skipPreflight: true })).error?.message).toMatch(
      /BlockhashNotFound/,
    );
    const forged = Buffer.from(await transfer(79n), "base64");
    forged[1 + 64 + 10]! ^= 0xff;
    expect((await send(forged.toString("base64"), { skipPreflight: true })).error?.code).toBe(-32002);
    // And it goes on from there.
    expect((await send(await transfer(80n))).result).toEqual(expect.any(String));
    expect(await balance(payTo.address)).toBe(before.tokens[1]! + 80n);
    expect(await rpc().getSlot().send()).toBe(before.slot + 1n);
  });

  it("refuses to start on a journal it cannot read or replay, naming it and how to start afresh", async () => {
    const unreadable = join(directory, "unreadable.jsonl");
    writeFileSync(unreadable, `${readFileSync(stateFile, "utf8")}{"signature": tru\n`);
    await expect(startValidator(unreadable)).rejects.toThrow(
      `the local Solana validator's journal ${unreadable} cannot be replayed (line ${journalLines().length + 1} is not JSON): remove it to start a new validator`,
    );

    const twice = join(directory, "twice.jsonl");
    const [first] = readFileSync(stateFile, "utf8").split("\n");
    writeFileSync(twice, `${first}\n${first}\n`);
    await expect(startValidator(twice)).rejects.toThrow(
      new RegExp(
        `journal ${twice} cannot be replayed \\(entry 2 \\(\\w+\\) is refused now: .*AlreadyProcessed.*remove it`,
      ),
    );
  });
});
