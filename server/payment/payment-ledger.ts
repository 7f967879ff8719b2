import type { PaymentScheme } from "../core/payment-scheme";
import type { PaymentProtocol } from "../core/payment-method-name";
import type { PaymentStatus } from "../core/payment-status";

export type { PaymentScheme } from "../core/payment-scheme";

export interface NewPayment {
  nonce: string;
  payer: string;
  /** What the payer signed for: the price (`exact`), or the most the call may settle (`upto`). */
  amount: bigint;
  scheme: PaymentScheme;
  /** The protocol the payment came by. */
  method: PaymentProtocol;
  network: string;
  resource: string;
  /** The endpoint's own path (aliases give their endpoint's) and the model of the call, for reports. */
  endpoint: string;
  model: string;
  bodyHash: string;
  /** The PAYMENT-SIGNATURE header as received: what reconciliation checks and settles with. */
  paymentSignature: string;
  quoteMs: number;
}

export interface PaymentUpdate {
  status: PaymentStatus;
  failureReason?: string;
  transaction?: string;
  /** The facilitator that verified it, then the one that settled it (or was last asked to). */
  facilitator?: string;
  /** What the settlement moved on chain (for `upto`, decided when the work is done). */
  settledAmount?: bigint;
  /** What a stream delivered before its settlement was refused (`unpaid`), at the quote's rates. */
  unpaidAmount?: bigint;
  verifyMs?: number;
  upstreamMs?: number;
  settleMs?: number;
}

/** A row of the ledger as it is read back. */
export interface PaymentRecord {
  id: number;
  nonce: string;
  payer: string;
  amount: bigint;
  scheme: PaymentScheme;
  method: PaymentProtocol;
  /** What moved on chain, once settled; null before (and on rows settled before it was recorded). */
  settledAmount: bigint | null;
  /** What an `unpaid` row's stream delivered, at the quote's rates; null on every other row. */
  unpaidAmount: bigint | null;
  network: string;
  resource: string;
  endpoint: string | null;
  model: string | null;
  bodyHash: string;
  /** Null on rows written before it was recorded. */
  paymentSignature: string | null;
  status: PaymentStatus;
  failureReason: string | null;
  transaction: string | null;
  /** Null on rows written before it was recorded, and on rows no facilitator verified. */
  facilitator: string | null;
  createdAt: Date;
  updatedAt: Date;
}

/**
 * The payments ledger, one row per payment signature accepted for processing. The unique nonce is the
 * double-spend guard: `claim` is one conditional insert, so of two requests with the same signature, on any
 * instances over the same database, exactly one gets an id.
 */
export interface PaymentLedger {
  /** Records a payment as pending; its id, or undefined when the nonce was already recorded. */
  claim(payment: NewPayment): Promise<number | undefined>;
  /** A field left out keeps its value. */
  update(id: number, update: PaymentUpdate): Promise<void>;
  /**
   * The same, only while the row's status is still `from` (one conditional statement): whether it applied. Of
   * reconcilers racing over a row (or a reconciler and the app), one moves it and the others see it moved.
   */
  updateIf(id: number, from: PaymentStatus, update: PaymentUpdate): Promise<boolean>;
  findByNonce(nonce: string): Promise<PaymentRecord | undefined>;
  /** Whether `payer` has an `unpaid` row written since `since` (the payer is then served settle-first). */
  unpaidSince(payer: string, since: Date): Promise<boolean>;
  /** The payers with `unpaid` rows made since `since`: how many, and what they delivered unpaid; the most first. */
  unpaidPayers(since: Date): Promise<UnpaidPayer[]>;
  /** A page of the rows in `statuses`, in id order after `afterId` (0 for the first page). */
  listByStatus(statuses: readonly PaymentStatus[], afterId: number, limit: number): Promise<PaymentRecord[]>;
  /** The newest `limit` rows in `statuses` made since `since`, the newest first. */
  newestByStatus(statuses: readonly PaymentStatus[], since: Date, limit: number): Promise<PaymentRecord[]>;
  /** The payments made since `since`, counted and summed by period (UTC), endpoint, model and status, in order. */
  report(since: Date, period: ReportPeriod): Promise<LedgerReportRow[]>;
}

export type ReportPeriod = "day" | "hour";

/** A payer who was delivered answers it did not pay for (`unpaid` rows): how many, and their amount. */
export interface UnpaidPayer {
  payer: string;
  count: number;
  /** In atomic units, what those answers delivered. */
  amount: bigint;
}

/**
 * The payments of one period, endpoint, model, status and protocol. Endpoint and model are null on rows from before
 * them.
 */
export interface LedgerReportRow {
  /** `2026-11-23` by day, `2026-11-23T14:00Z` by hour. */
  period: string;
  endpoint: string | null;
  model: string | null;
  status: PaymentStatus;
  method: PaymentProtocol;
  count: number;
  /** In atomic units, the sum of what they settled, for `unpaid` rows of what they delivered, else of what was signed for. */
  amount: bigint;
}
