import type { NetworkDefinition } from "../../networks";
import type { PaymentRecord } from "../payment/payment-ledger";
import { decodeRecordedPayment } from "../payment/x402-v1";
import type { PaymentStatus } from "../core/payment-status";

/** The statuses not known to be final. */
export const openStatuses: readonly PaymentStatus[] = ["pending", "verified", "settle_unknown"];

/**
 * What a run reads unless told to read every row: the open statuses, and the debts it may still collect (`unpaid`
 * upto rows: their signed maximum covers what the stream delivered, settled once the payer's funds allow, before the
 * payment's deadline).
 */
export const readStatuses: readonly PaymentStatus[] = [...openStatuses, "unpaid"];

/** An `upto` stream's refused settlement, still to be collected: its payment can settle what it delivered. */
export const isDebt = (record: PaymentRecord): boolean =>
  record.status === "unpaid" && record.scheme === "upto" && record.unpaidAmount !== null;

/**
 * What settling a recorded payment moves: `exact`, its amount; `upto`, what its call was charged, which the row kept
 * when the work was delivered (a debt's: what it delivered unpaid); null when that was not recorded.
 */
export function amountToSettle(record: PaymentRecord): bigint | null {
  if (record.scheme !== "upto") return record.amount;
  return isDebt(record) ? record.unpaidAmount : record.settledAmount;
}

/**
 * Whether a run asks the chain about this row it read. A channel's charge is not (channels are reconciled channel by
 * channel). Unless the run reads every row, an `unpaid` row is read only while it is a debt its payment may still
 * collect (before the payment's deadline): the others stay what they are, and reading them at every run would cost
 * a chain call each, for ever.
 */
export function readsRow(record: PaymentRecord, network: NetworkDefinition, now: number, all: boolean): boolean {
  if (record.scheme === "batch-settlement") return false;
  if (all || record.status !== "unpaid") return true;
  if (!isDebt(record) || !record.paymentSignature) return false;
  try {
    const { deadline } = decodeRecordedPayment(record.paymentSignature, network);
    return deadline === undefined || deadline * 1000 > now;
  } catch {
    // Read, so that the run reports what it cannot make of it.
    return true;
  }
}
