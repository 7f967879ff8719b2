import { createHash } from "node:crypto";
import {
  createSolanaRpc,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Blockhash,
  type Signature,
} from "@solana/kit";
import {
  findAssociatedTokenPda,
  getTransferCheckedInstructionDataDecoder,
  TOKEN_PROGRAM_ADDRESS,
} from "@solana-program/token";
import type { SvmNetwork } from "../../networks";
import type { DecodedPayment } from "./payment-signature";
import type { ChainPayment, ChainReader } from "./chain-payment";

/** TransferChecked's instruction discriminator in the SPL token programs. */
const TRANSFER_CHECKED = 12;
const TOKEN_2022_PROGRAM_ADDRESS = "TokenzQdBNbLqP5VvEdkq4PkSeLmo5YBHoWngiLC7d8oq";
/** How far before a payment reached us its transaction is looked for in the pay-to's history. */
const SEARCH_MARGIN_MS = 10 * 60_000;
const PAGE = 1000;

interface Landed {
  signature: string;
  err: unknown;
  messageBytes: Uint8Array;
}

/**
 * Solana "exact" payments: the payer signs a TransferChecked transaction whose fee payer, the facilitator, signs
 * last, so its signature (the transaction's id) is known only once sent. A transaction the ledger names is read by
 * its signature; otherwise the pay-to's token account history is read once per run and each transaction matched
 * by its message (the ledger's nonce is the message's SHA-256). An unused one is valid while its blockhash is.
 */
export class SvmChainReader implements ChainReader {
  private readonly rpc;
  /** The pay-to token accounts' transactions by message hash, read back to `since` once per reader. */
  private readonly history = new Map<string, { since: number; byNonce: Map<string, Landed> }>();

  constructor(
    private readonly network: SvmNetwork,
    rpcUrl: string,
  ) {
    this.rpc = createSolanaRpc(rpcUrl);
  }

  async recipientOf(payTo: string): Promise<string> {
    const [tokenAccount] = await findAssociatedTokenPda({
      mint: this.network.usdc.address as Address,
      owner: payTo as Address,
      tokenProgram: TOKEN_PROGRAM_ADDRESS,
    });
    return tokenAccount;
  }

  async find(payment: DecodedPayment, recorded: string | null, since: Date): Promise<ChainPayment> {
    const wire = (payment.payload.payload as { transaction: string }).transaction;
    const signed = getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    const messageBytes = Uint8Array.from(signed.messageBytes);
    const nonce = `svm:${sha256(messageBytes)}`;
    let landed = recorded ? await this.transaction(recorded) : undefined;
    if (landed && sha256(landed.messageBytes) !== sha256(messageBytes)) landed = undefined;
    landed ??= (await this.historyOf(await this.recipientOf(payment.payTo), since)).get(nonce);
    if (landed) {
      if (landed.err !== null) {
        const reason = `its transaction failed on chain: ${JSON.stringify(landed.err)}`;
        return { state: "void", reason, transaction: landed.signature };
      }
      return { state: "transferred", transaction: landed.signature, ...transferOf(landed.messageBytes, payment.payer) };
    }
    const { lifetimeToken } = getCompiledTransactionMessageDecoder().decode(messageBytes);
    const { value: valid } = await this.rpc.isBlockhashValid(lifetimeToken as Blockhash).send();
    return { state: "unused", expired: !valid };
  }

  private async transaction(signature: string): Promise<Landed | undefined> {
    const found = await this.rpc
      .getTransaction(signature as Signature, { encoding: "base64", maxSupportedTransactionVersion: 0 })
      .send();
    if (!found) return undefined;
    const decoded = getTransactionDecoder().decode(getBase64Encoder().encode(found.transaction[0]));
    return { signature, err: found.meta?.err ?? null, messageBytes: Uint8Array.from(decoded.messageBytes) };
  }

  /** The token account's transactions back to a while before `since`, newest first, by their message's hash. */
  private async historyOf(account: string, since: Date): Promise<Map<string, Landed>> {
    const from = since.getTime() - SEARCH_MARGIN_MS;
    const known = this.history.get(account);
    if (known && known.since <= from) return known.byNonce;
    const byNonce = new Map<string, Landed>();
    let before: Signature | undefined;
    for (;;) {
      const page = await this.rpc
        .getSignaturesForAddress(account as Address, { limit: PAGE, ...(before ? { before } : {}) })
        .send();
      for (const entry of page) {
        const landed = await this.transaction(entry.signature);
        if (landed) byNonce.set(`svm:${sha256(landed.messageBytes)}`, landed);
      }
      const last = page.at(-1);
      if (!last || page.length < PAGE || (last.blockTime !== null && Number(last.blockTime) * 1000 < from)) break;
      before = last.signature;
    }
    this.history.set(account, { since: from, byNonce });
    return byNonce;
  }
}

/** The TransferChecked a payment transaction makes: its destination token account and amount. */
function transferOf(messageBytes: Uint8Array, payer: string): { from: string; to: string; amount: bigint } {
  const message = getCompiledTransactionMessageDecoder().decode(messageBytes);
  for (const instruction of message.instructions) {
    const program = message.staticAccounts[instruction.programAddressIndex];
    const data = instruction.data;
    if (program !== TOKEN_PROGRAM_ADDRESS && program !== TOKEN_2022_PROGRAM_ADDRESS) continue;
    if (!data || data[0] !== TRANSFER_CHECKED) continue;
    const { amount } = getTransferCheckedInstructionDataDecoder().decode(data);
    const destination = message.staticAccounts[instruction.accountIndices?.[2] ?? -1];
    return { from: payer, to: destination ?? "(unknown)", amount };
  }
  return { from: payer, to: "(no token transfer)", amount: 0n };
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}
