import type { AppContext } from "../context/app-context";
import { checkHealth } from "../health/check-health";
import {
  ATTENTION_STATUSES,
  byEndpointAndModel,
  byPeriod,
  periodOf,
  readLedgerReport,
  type LedgerReport,
  type ReportLine,
  type StatusFigures,
} from "../ledger-report/ledger-report";
import { atomicToDecimal } from "../core/money";
import type { ReportPeriod } from "../payment/payment-ledger";
import type { ReconciliationRun } from "../reconcile/last-reconciliation";
import type { ReconcileOutcome } from "../reconcile/reconcile-ledger";
import type { PaymentStatus } from "../core/payment-status";
import { BUSIEST_SHOWN, busyPayer, type BusyPayer } from "./busy-payers";

/** The rows of those listed one by one, the newest first; the report's figures count them all. */
const ATTENTION_ROWS_SHOWN = 50;

/** One bar of a revenue chart: a period, what settled in it, and its calls. */
export interface RevenueBar {
  period: string;
  revenueAtomic: bigint;
  revenueUsd: string;
  calls: number;
}

/** A chart's bars, and what they add up to. */
export interface RevenueSeries {
  bars: RevenueBar[];
  revenueAtomic: bigint;
  revenueUsd: string;
  calls: number;
}

export interface AttentionRow {
  id: number;
  createdAt: string;
  status: PaymentStatus;
  endpoint: string;
  model: string;
  payer: string;
  amountAtomic: bigint;
  amountUsd: string;
  reason: string | null;
}

/** A provider or facilitator as /health sees it now: its probe, and its circuit breaker. */
export interface ComponentHealth {
  name: string;
  status: "up" | "down";
  latencyMs: number;
  error?: string;
  breaker: string;
  consecutiveFailures: number;
}

/** A reconciliation run as the page shows it: when, rows read, and its outcomes with rows, with their amounts. */
export interface RunView {
  finishedAt: string;
  error: string | undefined;
  checked: number;
  found: { outcome: ReconcileOutcome; count: number; amountUsd: string }[];
  /** What the channel contract held, claimed and not yet paid out, for the deployment's receivers. */
  awaitingPayoutAtomic: bigint;
  awaitingPayoutUsd: string;
}

/** What the channel contract holds for the pay-to, read now: its channels' claims, and what was paid out of them. */
export type PayoutView =
  | {
      receiver: string;
      claimedAtomic: bigint;
      claimedUsd: string;
      paidOutAtomic: bigint;
      paidOutUsd: string;
      /** Claimed and still in the contract: the pay-to does not have it until a payout sends it. */
      awaitingPayoutAtomic: bigint;
      awaitingPayoutUsd: string;
      error?: undefined;
    }
  | { receiver: string; error: string };

export interface OperatorView {
  network: string;
  networkName: string;
  database: string;
  generatedAt: string;
  /** The last 48 hours and the last 30 days, one bar per period (UTC), empty periods included. */
  hourly: RevenueSeries;
  daily: RevenueSeries;
  /** The report of the last 30 days by day: the figures of `paysvc ledger report --since 30d`. */
  report: LedgerReport;
  /** The report's lines added up per endpoint and model, with what went unpaid in USD. */
  endpoints: (Omit<ReportLine, "period"> & { unpaidUsd: string })[];
  unpaidUsd: string;
  /** The report's figures of the statuses that need a look (zero when none), and the newest such rows. */
  attention: {
    figures: Record<(typeof ATTENTION_STATUSES)[number], StatusFigures>;
    rows: AttentionRow[];
    total: number;
  };
  providers: ComponentHealth[];
  facilitators: ComponentHealth[];
  reconciliation: {
    intervalSeconds: number;
    last: RunView | undefined;
    /** The last run that found something, when it is not the last run. */
    lastFinding: RunView | undefined;
  };
  /** Where the deployment offers batch-settlement channels. */
  channelPayout: PayoutView | undefined;
  /** The keys and wallets with the most calls in this clock hour and the one before, with their rate-limit refusals. */
  busiest: BusyPayer[];
}

/** What the operator's page shows, read now: the ledger through the report's queries, health, reconciliation. */
export async function operatorView(context: AppContext, now = new Date()): Promise<OperatorView> {
  const { config, storage } = context;
  const decimals = config.network.usdc.decimals;
  const hourSince = new Date(Math.floor(now.getTime() / 3_600_000) * 3_600_000 - 47 * 3_600_000);
  const daySince = new Date(Math.floor(now.getTime() / 86_400_000) * 86_400_000 - 29 * 86_400_000);
  const [hourReport, dayReport, health, attention, channelPayout, busiest] = await Promise.all([
    readLedgerReport(storage, config.network, hourSince, "hour"),
    readLedgerReport(storage, config.network, daySince, "day"),
    checkHealth(context),
    attentionRows(context, daySince),
    payoutOf(context, decimals),
    storage.limitLog.busiest(Math.floor(now.getTime() / 3_600_000), BUSIEST_SHOWN),
  ]);
  const checks = (health.body as unknown as { checks: HealthChecks }).checks;
  return {
    network: config.network.id,
    networkName: config.network.displayName,
    database: storage.engine,
    generatedAt: now.toISOString(),
    hourly: bars(hourReport, hourSince, now, "hour", decimals),
    daily: bars(dayReport, daySince, now, "day", decimals),
    report: dayReport,
    endpoints: byEndpointAndModel(dayReport, decimals).map((line) => ({
      ...line,
      unpaidUsd: atomicToDecimal(line.unpaidAtomic, decimals),
    })),
    unpaidUsd: atomicToDecimal(dayReport.total.unpaidAtomic, decimals),
    attention: {
      figures: Object.fromEntries(
        ATTENTION_STATUSES.map((status) => [
          status,
          dayReport.statuses[status] ?? { count: 0, amountAtomic: 0n, amountUsd: atomicToDecimal(0n, decimals) },
        ]),
      ) as OperatorView["attention"]["figures"],
      rows: attention,
      total: ATTENTION_STATUSES.reduce((sum, status) => sum + (dayReport.statuses[status]?.count ?? 0), 0),
    },
    providers: components(checks.providers),
    facilitators: components(checks.facilitators),
    reconciliation: reconciliationOf(context, decimals),
    channelPayout,
    busiest: busiest.map(busyPayer),
  };
}

/** The pay-to's account in the channel contract, read now; a chain that cannot be read is shown, not thrown. */
async function payoutOf(context: AppContext, decimals: number): Promise<PayoutView | undefined> {
  if (!context.channels) return undefined;
  const receiver = context.channels.scheme.getReceiverAddress();
  const usd = (atomic: bigint) => atomicToDecimal(atomic, decimals);
  try {
    const { claimed, paidOut, awaitingPayout } = await context.channels.payouts.read(receiver);
    return {
      receiver,
      claimedAtomic: claimed,
      claimedUsd: usd(claimed),
      paidOutAtomic: paidOut,
      paidOutUsd: usd(paidOut),
      awaitingPayoutAtomic: awaitingPayout,
      awaitingPayoutUsd: usd(awaitingPayout),
    };
  } catch (error) {
    return { receiver, error: `the channel contract could not be read: ${(error as Error).message}` };
  }
}

function reconciliationOf(context: AppContext, decimals: number): OperatorView["reconciliation"] {
  const { last, lastFinding } = context.reconciliation;
  const view = (run: ReconciliationRun): RunView => {
    const outcomes = Object.entries(run.report?.outcomes ?? {}) as [
      ReconcileOutcome,
      { count: number; amount: bigint },
    ][];
    const awaiting = (run.report?.payouts ?? []).reduce((sum, payout) => sum + payout.awaitingPayout, 0n);
    return {
      finishedAt: run.finishedAt.toISOString(),
      error: run.error,
      checked: run.report?.checked ?? 0,
      awaitingPayoutAtomic: awaiting,
      awaitingPayoutUsd: atomicToDecimal(awaiting, decimals),
      found: outcomes
        .filter(([outcome, figures]) => figures.count > 0 && outcome !== "agrees")
        .map(([outcome, figures]) => ({
          outcome,
          count: figures.count,
          amountUsd: atomicToDecimal(figures.amount, decimals),
        })),
    };
  };
  return {
    intervalSeconds: context.config.reconcileIntervalMs / 1000,
    last: last && view(last),
    lastFinding: lastFinding && lastFinding !== last ? view(lastFinding) : undefined,
  };
}

/** Every period from `since` to `now`, with what the report has for it (nothing: zero). */
function bars(report: LedgerReport, since: Date, now: Date, by: ReportPeriod, decimals: number): RevenueSeries {
  const found = new Map(byPeriod(report, decimals).map((line) => [line.period, line]));
  const step = by === "hour" ? 3_600_000 : 86_400_000;
  const result: RevenueBar[] = [];
  for (let at = since.getTime(); at <= now.getTime(); at += step) {
    const period = periodOf(new Date(at), by);
    const line = found.get(period);
    result.push({
      period,
      revenueAtomic: line?.revenueAtomic ?? 0n,
      revenueUsd: line?.revenueUsd ?? atomicToDecimal(0n, decimals),
      calls: Object.values(line?.requests ?? {}).reduce((sum, count) => sum + count, 0),
    });
  }
  const revenueAtomic = result.reduce((sum, bar) => sum + bar.revenueAtomic, 0n);
  return {
    bars: result,
    revenueAtomic,
    revenueUsd: atomicToDecimal(revenueAtomic, decimals),
    calls: result.reduce((sum, bar) => sum + bar.calls, 0),
  };
}

/** The newest unsettled, settle_unknown and unpaid rows made since `since`, with their amounts. */
async function attentionRows(context: AppContext, since: Date): Promise<AttentionRow[]> {
  const decimals = context.config.network.usdc.decimals;
  const rows = await context.storage.ledger.newestByStatus(ATTENTION_STATUSES, since, ATTENTION_ROWS_SHOWN);
  return rows.map((row) => {
    const amount = row.settledAmount ?? row.unpaidAmount ?? row.amount;
    return {
      id: row.id,
      createdAt: row.createdAt.toISOString(),
      status: row.status,
      endpoint: row.endpoint ?? "(unrecorded)",
      model: row.model ?? "(unrecorded)",
      payer: row.payer,
      amountAtomic: amount,
      amountUsd: atomicToDecimal(amount, decimals),
      reason: row.failureReason,
    };
  });
}

interface HealthChecks {
  providers: Record<string, HealthEntry>;
  facilitators: Record<string, HealthEntry>;
}

interface HealthEntry {
  status: "up" | "down";
  latency_ms: number;
  error?: string;
  breaker: string;
  consecutive_failures: number;
}

function components(entries: Record<string, HealthEntry>): ComponentHealth[] {
  return Object.entries(entries).map(([name, entry]) => ({
    name,
    status: entry.status,
    latencyMs: entry.latency_ms,
    ...(entry.error === undefined ? {} : { error: entry.error }),
    breaker: entry.breaker,
    consecutiveFailures: entry.consecutive_failures,
  }));
}
