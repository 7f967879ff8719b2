import {
  appendTransactionMessageInstruction,
  createSolanaRpc,
  createTransactionMessage,
  getBase64EncodedWireTransaction,
  mainnet,
  pipe,
  setTransactionMessageFeePayerSigner,
  setTransactionMessageLifetimeUsingBlockhash,
  signTransactionMessageWithSigners,
  type Address,
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

async function rawCall(method: string, params: unknown[]) {
  const response = await fetch(validator.rpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method, params }),
  });
  return (await response.json()) as { id: number; result?: unknown; error?: { code: number; message: string } };
}

/** A USDC TransferChecked from the payer to the pay-to, fee paid by the fee payer, fully signed. */
async function transfer(amount: bigint): Promise<string> {
  const { value: blockhash } = await rpc().getLatestBlockhash().send();
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
    (tx) => setTransactionMessageLifetimeUsingBlockhash(blockhash, tx),
  );
  return getBase64EncodedWireTransaction(await signTransactionMessageWithSigners(message));
}

beforeAll(async () => {
  [feePayer, payTo, payer] = await Promise.all([solanaDevAccount(0), solanaDevAccount(1), solanaDevAccount(2)]);
  validator = await startLocalSolana({
    network,
    port: 0,
    feePayer: feePayer.address,
    payTo: payTo.address,
    payers: [payer.address],
  });
});
afterAll(async () => {
  await validator?.stop();
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

    const overdraw = await rawCall("sendTransaction", [await transfer(PAYER_STARTING_BALANCE * 2n), {}]);
    expect(overdraw.error?.code).toBe(-32002);
    expect(await balance(payTo.address)).toBe(1234n);
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
