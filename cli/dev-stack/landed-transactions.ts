import {
  getBase58Decoder,
  getBase64EncodedWireTransaction,
  getBase64Encoder,
  getCompiledTransactionMessageDecoder,
  getTransactionDecoder,
  type Address,
  type Transaction,
} from "@solana/kit";
import { FailedTransactionMetadata, type LiteSVM } from "litesvm";
import { SolanaAccounts, type TokenBalance } from "./solana-accounts";
import type { SolanaJournal } from "./solana-journal";
import { transactionError } from "./solana-transaction-error";

// Made once: kit builds its codecs on each call, which shows when thousands of transactions replay.
const transactionDecoder = getTransactionDecoder();
const messageDecoder = getCompiledTransactionMessageDecoder();
const base58 = getBase58Decoder();

export interface InnerInstructions {
  index: number;
  instructions: { programIdIndex: number; accounts: number[]; data: string; stackHeight: number }[];
}

/** A transaction the validator included: what a node's getTransaction and getSignaturesForAddress answer. */
export interface LandedTransaction {
  /** Position in landing order, for paging through an address's history. */
  order: number;
  signature: string;
  slot: bigint;
  blockTime: number;
  /** The wire transaction, base64. */
  wire: string;
  version: "legacy" | 0;
  /** The static keys, then those loaded from lookup tables (writable, then read-only), as a node indexes them. */
  accountKeys: Address[];
  loadedAddresses: { writable: Address[]; readonly: Address[] };
  /** null when it succeeded; a failed one still paid its fee. */
  err: unknown;
  fee: bigint;
  preBalances: bigint[];
  postBalances: bigint[];
  preTokenBalances: TokenBalance[];
  postTokenBalances: TokenBalance[];
  logMessages: string[];
  computeUnitsConsumed: bigint;
  innerInstructions: InnerInstructions[];
}

/** Why LiteSVM did not include a transaction (nothing changed). */
export interface Refusal {
  message: string;
  logs: string[];
}

/**
 * The validator's record of included transactions over LiteSVM (which keeps only their results): their slots,
 * balances before and after, and the per-address history, journaled so that a restart rebuilds all of it.
 */
export class LandedTransactions {
  private readonly bySignature = new Map<string, LandedTransaction>();
  private readonly byAddress = new Map<string, LandedTransaction[]>();
  private readonly accounts: SolanaAccounts;

  constructor(
    private readonly svm: LiteSVM,
    private readonly journal?: SolanaJournal,
  ) {
    this.accounts = new SolanaAccounts(svm);
  }

  /**
   * Sends a signed transaction; when LiteSVM includes it, it is journaled before this returns. (Should the
   * journal fail to be written, that error is thrown and the transaction is not recorded: it would not survive a
   * restart.)
   */
  send(transaction: Transaction): LandedTransaction | Refusal {
    return this.land(transaction, Math.floor(Date.now() / 1000), (landed) =>
      this.journal?.append({
        signature: landed.signature,
        slot: landed.slot,
        blockTime: landed.blockTime,
        err: landed.err,
        transaction: landed.wire,
      }),
    );
  }

  /**
   * Lands the journal's transactions again, in their slots, after the same setup as before the restart. Their
   * blockhashes may be ones LiteSVM no longer knows, so its blockhash check is off while they replay. Signatures
   * stay checked: LiteSVM's check that a transaction was not processed before comes with it.
   */
  replay(): void {
    if (!this.journal) return;
    const journal = this.journal;
    const entries = journal.read();
    this.svm.withBlockhashCheck(false);
    try {
      entries.forEach((entry, index) => {
        let transaction: Transaction;
        try {
          transaction = transactionDecoder.decode(getBase64Encoder().encode(entry.transaction));
        } catch {
          throw journal.unusable(`entry ${index + 1} holds no transaction`);
        }
        this.svm.warpToSlot(entry.slot);
        const outcome = this.land(transaction, entry.blockTime, () => undefined);
        const different =
          "message" in outcome
            ? `is refused now: ${outcome.message}`
            : outcome.signature !== entry.signature
              ? `has signature ${outcome.signature}`
              : JSON.stringify(outcome.err) !== JSON.stringify(entry.err)
                ? `ends with ${JSON.stringify(outcome.err)} instead of ${JSON.stringify(entry.err)}`
                : undefined;
        if (different) throw journal.unusable(`entry ${index + 1} (${entry.signature}) ${different}`);
      });
    } finally {
      this.svm.withBlockhashCheck(true);
    }
  }

  get(signature: string): LandedTransaction | undefined {
    return this.bySignature.get(signature);
  }

  /** The included transactions naming `address`, newest first, strictly between `until` and `before`. */
  history(address: string, options: { limit: number; before?: string; until?: string }): LandedTransaction[] {
    const beforeOrder = options.before === undefined ? Infinity : this.bySignature.get(options.before)?.order;
    // As a node does, an unknown `before` finds nothing and an unknown `until` does not stop the search.
    if (beforeOrder === undefined) return [];
    const untilOrder = options.until === undefined ? -1 : (this.bySignature.get(options.until)?.order ?? -1);
    const found: LandedTransaction[] = [];
    const list = this.byAddress.get(address) ?? [];
    for (let index = list.length - 1; index >= 0 && found.length < options.limit; index--) {
      const landed = list[index]!;
      if (landed.order <= untilOrder) break;
      if (landed.order < beforeOrder) found.push(landed);
    }
    return found;
  }

  private land(
    transaction: Transaction,
    blockTime: number,
    persist: (landed: LandedTransaction) => void,
  ): LandedTransaction | Refusal {
    const signature = signatureOf(transaction);
    // LiteSVM's history is bounded and its blockhash does not expire: a node would never land a signature twice.
    if (this.bySignature.has(signature)) {
      return { message: "AlreadyProcessed: this transaction has already been processed", logs: [] };
    }
    const message = messageDecoder.decode(transaction.messageBytes);
    const loadedAddresses = this.accounts.loadedAddresses(
      message.version === "legacy" ? [] : (message.addressTableLookups ?? []),
    );
    const accountKeys = [...message.staticAccounts, ...loadedAddresses.writable, ...loadedAddresses.readonly];
    const pre = this.accounts.balances(accountKeys);
    // litesvm is typed with @solana/kit 8 and decodes kit 5's transactions alike: same shape, other brands.
    const result = this.svm.sendTransaction(transaction as never);
    const failed = result instanceof FailedTransactionMetadata;
    // A failure LiteSVM included (its history has it now) charged the fee, as on a cluster: it is kept. (It
    // cannot have been there before: the signatures it holds are checked above.)
    if (failed && this.svm.getTransaction(signature as never) === null) {
      return { message: result.toString(), logs: result.meta().logs() };
    }
    const meta = failed ? result.meta() : result;
    const post = this.accounts.balances(accountKeys);
    const sum = (values: bigint[]) => values.reduce((total, value) => total + value, 0n);
    const landed: LandedTransaction = {
      order: this.bySignature.size,
      signature,
      slot: this.svm.getClock().slot,
      blockTime,
      wire: getBase64EncodedWireTransaction(transaction),
      version: message.version,
      accountKeys,
      loadedAddresses,
      err: failed ? transactionError(result) : null,
      // Instructions only move lamports between the transaction's accounts: what they lost in all is the fee.
      fee: sum(pre.lamports) - sum(post.lamports),
      preBalances: pre.lamports,
      postBalances: post.lamports,
      preTokenBalances: pre.tokens,
      postTokenBalances: post.tokens,
      logMessages: meta.logs(),
      computeUnitsConsumed: meta.computeUnitsConsumed(),
      innerInstructions: meta.innerInstructions().flatMap((list, index) =>
        list.length === 0
          ? []
          : [
              {
                index,
                instructions: list.map((inner) => ({
                  programIdIndex: inner.instruction().programIdIndex(),
                  accounts: [...inner.instruction().accounts()],
                  data: base58.decode(inner.instruction().data()),
                  stackHeight: inner.stackHeight(),
                })),
              },
            ],
      ),
    };
    persist(landed);
    this.bySignature.set(signature, landed);
    for (const address of new Set(accountKeys)) {
      const list = this.byAddress.get(address) ?? [];
      list.push(landed);
      this.byAddress.set(address, list);
    }
    // Each transaction lands in its own slot, as on a live cluster, so later reads see a later slot.
    this.svm.warpToSlot(landed.slot + 1n);
    return landed;
  }
}

/** The fee payer's signature names a transaction; an empty slot reads as zeros, as on the wire. */
function signatureOf(transaction: Transaction): string {
  const [first] = Object.values(transaction.signatures);
  return base58.decode(first ?? new Uint8Array(64));
}
