import type { NetworkDefinition } from "../../networks";
import type { ReceiverPayout } from "../channels/receiver-payouts";
import { reconcileChannels, reconcilePayouts, type ReconciledChannel } from "./reconcile-channels";
import type { ChannelReconcilerServices } from "./reconcile-channels";
import type { PrepaidKeyStore } from "../prepaid/prepaid-key-store";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger, PaymentRecord } from "../payment/payment-ledger";
import type { DecodedPayment } from "../payment/payment-signature";
import { decodeRecordedPayment, facilitatorTerms, v1Requirements } from "../payment/x402-v1";
import { paymentStatuses, type PaymentStatus } from "../core/payment-status";
import { amountToSettle, isDebt, openStatuses, readStatuses, readsRow } from "./reconciled-statuses";
import type { ChainPayment, ChainReader } from "../payment/chain-payment";

/** What reconciliation found of a row (in --check mode, what it would do). */
export const reconcileOutcomes = [
  /** A final row the chain confirms (rows already final are read only with --all). */
  "agrees",
  /** The chain has the transfer: the row now says settled, with its transaction. */
  "settled",
  /** Unused and still valid, the work delivered: settled now through the facilitator. */
  "recovered",
  /** It can never be settled (expired, cancelled, failed on chain): the row now says unsettled. */
  "unsettled",
  /** Left for a later run: in flight, still valid with its work not delivered, or settling failed for now. */
  "open",
  /** The chain contradicts the ledger: another amount, another recipient, money moved for a row not charged. */
  "mismatch",
  /** Nothing to check it with: no signature recorded (rows from older releases). */
  "unreadable",
  /** The chain could not be read for it (the run goes on with the next row). */
  "error",
] as const;
export type ReconcileOutcome = (typeof reconcileOutcomes)[number];

export interface ReconciledRow {
  id: number;
  nonce: string;
  payer: string;
  /** What the row settled, or was found to have moved on chain; for a row not settled, what was signed for. */
  amount: bigint;
  /** The status read, before this run. */
  status: PaymentStatus;
  outcome: ReconcileOutcome;
  transaction?: string;
  detail?: string;
}

export interface ReconcileReport {
  network: string;
  /** Only read (--check), or applied. */
  check: boolean;
  /** Rows read: those not final, or all (--all). */
  scope: "open" | "all";
  checked: number;
  outcomes: Record<ReconcileOutcome, { count: number; amount: bigint }>;
  /** Every row but those that agree. */
  rows: ReconciledRow[];
  /** What the rows read that are (or, checking, would be) settled add up to. */
  settledAmount: bigint;
  /** Each batch-settlement channel against the chain and its ledger rows (whose rows the run above leaves out). */
  channels: ReconciledChannel[];
  /** What the channel contract holds for the deployment's receivers, with what it has not paid out yet (EVM). */
  payouts: ReceiverPayout[];
}

const PAGE = 500;

export interface ReconcilerServices {
  network: NetworkDefinition;
  ledger: PaymentLedger;
  reader: ChainReader;
  /** Settles what can still be settled, through the deployment's facilitator; undefined: only checks (--check). */
  gateway: PaymentGateway | undefined;
  /** A pending or verified row younger than this may still be in its request: left alone. */
  paymentTimeoutMs: number;
  /** Where a key bought with a payment that will never be settled is voided. */
  prepaidKeys: Pick<PrepaidKeyStore, "voidBoughtWith">;
  /** The deployment's batch-settlement channels, reconciled channel by channel (EVM networks). */
  channels?: Omit<ChannelReconcilerServices, "ledger" | "network">;
}

/**
 * Reads ledger rows back against the chain and records what the chain says. Safe to run repeatedly and from
 * several machines at once: a row moves only from the status it was read in (a conditional update), and a
 * payment can be settled only once on chain (its authorization nonce or transaction), so racing runs agree.
 */
export class LedgerReconciler {
  constructor(private readonly services: ReconcilerServices) {}

  async run(options: { check: boolean; all: boolean; now?: number }): Promise<ReconcileReport> {
    const now = options.now ?? Date.now();
    const report: ReconcileReport = {
      network: this.services.network.id,
      check: options.check,
      scope: options.all ? "all" : "open",
      checked: 0,
      outcomes: Object.fromEntries(reconcileOutcomes.map((outcome) => [outcome, { count: 0, amount: 0n }])) as never,
      rows: [],
      settledAmount: 0n,
      channels: [],
      payouts: [],
    };
    const statuses = options.all ? paymentStatuses : readStatuses;
    for (let afterId = 0; ;) {
      const page = await this.services.ledger.listByStatus(statuses, afterId, PAGE);
      for (const record of page) {
        if (!readsRow(record, this.services.network, now, options.all)) continue;
        const row = await this.reconcile(record, options.check, now).catch((error: unknown): ReconciledRow => ({
          ...rowOf(record, "error"),
          detail: `the chain could not be read: ${(error as Error).message}`,
        }));
        report.checked += 1;
        report.outcomes[row.outcome].count += 1;
        report.outcomes[row.outcome].amount += row.amount;
        const settled = row.outcome === "settled" || row.outcome === "recovered";
        if (settled || (row.outcome === "agrees" && row.status === "settled")) report.settledAmount += row.amount;
        if (row.outcome !== "agrees") report.rows.push(row);
      }
      if (page.length < PAGE) break;
      afterId = page.at(-1)!.id;
    }
    const { channels, network, ledger } = this.services;
    if (channels && network.kind === "evm") {
      report.channels = await reconcileChannels({ ...channels, network, ledger }, options.check);
      report.payouts = await reconcilePayouts({ ...channels, network, ledger });
    }
    return report;
  }

  private async reconcile(record: PaymentRecord, check: boolean, now: number): Promise<ReconciledRow> {
    const { status } = record;
    const inFlight = status === "pending" || status === "verified";
    if (inFlight && record.createdAt.getTime() + this.services.paymentTimeoutMs > now) {
      return { ...rowOf(record, "open"), detail: "in flight: younger than the payment timeout" };
    }
    if (!record.paymentSignature) {
      return { ...rowOf(record, "unreadable"), detail: "no payment signature recorded (a row from an older release)" };
    }
    const payment = decodeRecordedPayment(record.paymentSignature, this.services.network);
    const chain = await this.services.reader.find(payment, record.transaction, record.createdAt);
    return this.judge(record, payment, chain, check);
  }

  /** What the chain's answer means for the row, and the row's new status when it gets one. */
  private async judge(
    record: PaymentRecord,
    payment: DecodedPayment,
    chain: ChainPayment,
    check: boolean,
  ): Promise<ReconciledRow> {
    const { status } = record;
    const debt = isDebt(record);
    const open = debt || openStatuses.includes(status);
    if (chain.state === "transferred") {
      const problems = await this.disagreements(record, payment, chain);
      if (problems.length > 0) return { ...rowOf(record, "mismatch", chain.transaction), detail: problems.join("; ") };
      if (status === "settled") return rowOf(record, "agrees", chain.transaction);
      if (!open) {
        const said = record.failureReason ? `${status} (${record.failureReason})` : status;
        const detail = `the ledger says ${said}, but the chain transferred it`;
        return { ...rowOf(record, "mismatch", chain.transaction), detail };
      }
      return this.move(record, "settled", { transaction: chain.transaction, settledAmount: chain.amount }, check);
    }
    if (status === "settled") {
      const detail = `the ledger says settled${record.transaction ? ` in ${record.transaction}` : ""}, but ${
        chain.state === "void" ? chain.reason : "the payment is unused on chain"
      }`;
      return { ...rowOf(record, "mismatch", record.transaction ?? undefined), detail };
    }
    if (!open) return rowOf(record, "agrees");
    // A debt its payment can no longer collect stays on record as what it is.
    if (debt && (chain.state === "void" || chain.expired)) return rowOf(record, "agrees");
    if (chain.state === "void") return this.move(record, "unsettled", { failureReason: chain.reason }, check);
    const delivered = status === "settle_unknown" || debt;
    if (chain.expired) {
      const failureReason = delivered
        ? "the authorization expired before it was settled"
        : "the work was not delivered, and the authorization expired";
      return this.move(record, "unsettled", { failureReason }, check);
    }
    if (!delivered) {
      const until = chain.validUntil ? ` (valid until ${chain.validUntil.toISOString()})` : "";
      return { ...rowOf(record, "open"), detail: `the work was not delivered: not settled${until}` };
    }
    if (check) return { ...rowOf(record, "recovered"), detail: "unused and still valid: would settle it now" };
    return this.settleNow(record, payment);
  }

  /** Settles a delivered, unused, valid payment; a refusal is looked at again on chain (another run may have won). */
  private async settleNow(record: PaymentRecord, payment: DecodedPayment): Promise<ReconciledRow> {
    const { gateway, reader } = this.services;
    if (!gateway) return { ...rowOf(record, "open"), detail: "unused and still valid: no facilitator to settle it" };
    const terms = this.recordedTerms(record, payment);
    const amount = amountToSettle(record);
    if (amount === null) {
      return { ...rowOf(record, "open"), detail: "an upto payment whose charge was not recorded: not settled" };
    }
    const settlement = await gateway
      .settle(terms.payload, terms.requirements, {
        amount: record.scheme === "upto" ? amount : undefined,
        verifiedBy: record.facilitator ?? undefined,
        payment,
      })
      .catch((error: unknown) => ({ success: false as const, errorReason: (error as Error).message }));
    if (settlement.success) {
      const update = {
        transaction: settlement.transaction,
        settledAmount: amount,
        facilitator: settlement.facilitator,
      };
      return this.move(record, "settled", update, false, "recovered");
    }
    const chain = await reader.find(payment, record.transaction, record.createdAt);
    if (chain.state !== "unused") return this.judge(record, payment, chain, false);
    return { ...rowOf(record, "open"), detail: `settling failed for now: ${settlement.errorReason ?? "refused"}` };
  }

  /**
   * What the facilitator settles a recorded payment with: a v2 payload names its requirements; a v1 one is settled
   * on the requirements its 402 offered, made again from the row and the network (v1 signs amount and pay-to).
   */
  private recordedTerms(record: PaymentRecord, payment: DecodedPayment) {
    if (payment.version === 2) return facilitatorTerms(payment, payment.payload.accepted, undefined);
    const { network, paymentTimeoutMs } = this.services;
    const requirements = {
      scheme: "exact",
      network: network.id,
      amount: record.amount.toString(),
      asset: payment.asset,
      payTo: payment.payTo,
      maxTimeoutSeconds: Math.round(paymentTimeoutMs / 1000),
      extra: network.kind === "evm" ? { ...network.usdc.eip712 } : {},
    };
    const v1Network = network.kind === "evm" ? network.x402V1Network : undefined;
    const v1 = v1Network ? v1Requirements(requirements, v1Network, { url: record.resource }) : undefined;
    return facilitatorTerms(payment, requirements, v1);
  }

  /** What the chain's transfer says that the ledger does not. */
  private async disagreements(
    record: PaymentRecord,
    payment: DecodedPayment,
    chain: Extract<ChainPayment, { state: "transferred" }>,
  ): Promise<string[]> {
    const problems: string[] = [];
    // exact moves the amount signed; upto what the call was charged (at most the amount signed, if not recorded).
    const expected = record.scheme === "upto" ? record.settledAmount : record.amount;
    if (expected === null ? chain.amount > record.amount : chain.amount !== expected) {
      const said = expected === null ? `at most ${record.amount}` : String(expected);
      problems.push(`the chain transferred ${chain.amount} atomic units, the ledger says ${said}`);
    }
    const payTo = await this.services.reader.recipientOf(payment.payTo);
    if (chain.to !== payTo) problems.push(`the transfer went to ${chain.to}, not to the pay-to ${payTo}`);
    if (chain.from.toLowerCase() !== record.payer.toLowerCase()) {
      problems.push(`the transfer came from ${chain.from}, the ledger says ${record.payer}`);
    }
    if (record.transaction && record.transaction !== chain.transaction) {
      problems.push(`the ledger names transaction ${record.transaction}, the chain used ${chain.transaction}`);
    }
    return problems;
  }

  /** Moves the row from the status it was read in; another process that moved it first wins. */
  private async move(
    record: PaymentRecord,
    to: "settled" | "unsettled",
    update: { transaction?: string; failureReason?: string; settledAmount?: bigint; facilitator?: string },
    check: boolean,
    outcome: ReconcileOutcome = to,
  ): Promise<ReconciledRow> {
    const row = {
      ...rowOf(record, outcome, update.transaction),
      ...(update.settledAmount !== undefined && { amount: update.settledAmount }),
      detail: update.failureReason,
    };
    if (check) return row;
    // A prepaid key delivered while its settlement's outcome was unknown is not paid for: it stops working, before
    // the row becomes final (a payment void or expired on chain never settles later; voiding again changes nothing).
    const voided = to === "unsettled" && (await this.services.prepaidKeys.voidBoughtWith(record.nonce));
    if (await this.services.ledger.updateIf(record.id, record.status, { status: to, ...update })) {
      return voided ? { ...row, detail: `${row.detail}; the prepaid key it bought is void` } : row;
    }
    const now = await this.services.ledger.findByNonce(record.nonce);
    return { ...rowOf(record, "open"), detail: `moved to ${now?.status ?? "?"} by another process meanwhile` };
  }
}

function rowOf(record: PaymentRecord, outcome: ReconcileOutcome, transaction?: string): ReconciledRow {
  return {
    id: record.id,
    nonce: record.nonce,
    payer: record.payer,
    amount: record.settledAmount ?? record.amount,
    status: record.status,
    outcome,
    ...(transaction ? { transaction } : {}),
  };
}
