import type { DecodedPayment } from "./payment-signature";

/** What the chain says of one signed payment. */
export type ChainPayment =
  /** The transfer happened, in `transaction`: from, to (as `recipientOf` names the pay-to) and amount as on chain. */
  | { state: "transferred"; transaction: string; from: string; to: string; amount: bigint }
  /** Nothing used it yet. `expired`: nothing can any more (past validBefore; on Solana, its blockhash is too old). */
  | { state: "unused"; expired: boolean; validUntil?: Date }
  /** It can never transfer: cancelled by the payer (EIP-3009), or its transaction landed and failed (Solana). */
  | { state: "void"; reason: string; transaction?: string };

/** Reads one network's chain for payments. */
export interface ChainReader {
  /**
   * What became of a signed payment. `recorded`: the transaction the ledger names, when it names one (looked at
   * first); `since`: when the payment reached us (the transfer cannot be older than its signature).
   */
  find(payment: DecodedPayment, recorded: string | null, since: Date): Promise<ChainPayment>;
  /** How `find` names a transfer's recipient when it is `payTo` (on Solana, the pay-to's token account). */
  recipientOf(payTo: string): Promise<string>;
}
