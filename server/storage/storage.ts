import type { OwnedKeyStore } from "../prepaid/owned-keys";
import type { WindowLog } from "../windows/window-log";
import type { LimitLog } from "../limits/limit-log";
import type { SessionGenerations } from "../auth/session-store";
import type { PaidAnswerStore } from "../payment/paid-answers";
import type { PaymentLedger } from "../payment/payment-ledger";
import type { QuoteHoldStore } from "../payment/quote-hold";
import type { PayerHoldStore } from "../payment/payer-holds";
import type { PrepaidKeyStore } from "../prepaid/prepaid-key-store";
import type { Engine } from "../../config/database-url";
import type { ChannelStorage } from "@x402/evm/batch-settlement/server";

/**
 * The service's state, on SQLite (one file, the embedded default) or PostgreSQL (shared by several instances).
 * Every store keeps its invariants inside the database, so they hold for all processes over it.
 */
export interface Storage {
  engine: Engine;
  ledger: PaymentLedger;
  prepaidKeys: PrepaidKeyStore;
  /** Keys as their owners and the operator see and change them. */
  ownedKeys: OwnedKeyStore;
  /** The free windows' requests, and any rate limit's (windows/caller-windows.ts). */
  windowLog: WindowLog;
  /** The rate limits' rows: per prepaid key, paying wallet, and sign-in attempts per address (limits/limit-log.ts). */
  limitLog: LimitLog;
  quoteHolds: QuoteHoldStore;
  /** What each payer owes at once: the signed maxima of its payments not taken yet (payer-holds.ts). */
  payerHolds: PayerHoldStore;
  /** Paid answers kept for retries under a payment-identifier. */
  paidAnswers: PaidAnswerStore;
  /** The browser sessions' generations (the operator's, the wallets'; auth/session-store.ts). */
  sessions: SessionGenerations;
  /** x402 batch-settlement channels: the state the scheme's server keeps, shared by every instance. */
  channels: ChannelStorage;
  /**
   * Runs `work` unless another holder runs work of that name (any process over the database: a PostgreSQL advisory
   * lock; SQLite: this process); undefined when it was not run.
   */
  exclusive<T>(name: string, work: () => Promise<T>): Promise<T | undefined>;
  /** One round trip to the database, for /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
