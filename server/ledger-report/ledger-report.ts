import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal } from "../core/money";
import type { LedgerReportRow, PaymentLedger, ReportPeriod, UnpaidPayer } from "../payment/payment-ledger";
import type { PrepaidKeyStore, PrepaidSummary } from "../prepaid/prepaid-key-store";
import type { PaymentStatus } from "../core/payment-status";
import type { PaymentProtocol } from "../core/payment-method-name";

/**
 * The ledger report, one definition for `paysvc ledger report` and the operator's page (/operator): the same
 * queries (the ledger's groups and the prepaid keys' summary) and the same sums.
 */

/** Payments not final yet: in flight, or `settle_unknown` waiting for reconciliation (the report's OPEN column). */
export const OPEN_STATUSES = ["pending", "verified", "settle_unknown"] as const satisfies PaymentStatus[];
/** The statuses an operator looks at: never settled, outcome unknown, delivered but refused. */
export const ATTENTION_STATUSES = ["unsettled", "settle_unknown", "unpaid"] as const satisfies PaymentStatus[];

/** How many of a line's (or the total's) payments are in any of `statuses`. */
export function countIn(figures: Pick<ReportLine, "requests">, statuses: readonly PaymentStatus[]): number {
  return statuses.reduce((sum, status) => sum + (figures.requests[status] ?? 0), 0);
}

/** One line of the report: a period, endpoint and model, its payments counted by status and its revenue. */
export interface ReportLine {
  period: string;
  endpoint: string;
  model: string;
  /** Payments by ledger status. */
  requests: Partial<Record<PaymentStatus, number>>;
  /** What settled, in atomic units and in USD (6 decimals for USDC), both exact. */
  revenueAtomic: bigint;
  revenueUsd: string;
  /** What streams delivered before their settlement was refused (`unpaid` rows), in atomic units. */
  unpaidAtomic: bigint;
}

export type ReportFigures = Pick<ReportLine, "requests" | "revenueAtomic" | "revenueUsd" | "unpaidAtomic">;

/** The payments of one status over the whole period: what settled; for `unpaid`, what was delivered; else signed. */
export interface StatusFigures {
  count: number;
  amountAtomic: bigint;
  amountUsd: string;
}

export interface LedgerReport {
  network: string;
  since: string;
  by: ReportPeriod;
  lines: ReportLine[];
  total: ReportFigures;
  /** Every status found, over the whole period. */
  statuses: Partial<Record<PaymentStatus, StatusFigures>>;
  /** Each protocol's payments over the whole period, and what they settled. */
  methods: Partial<Record<PaymentProtocol, StatusFigures>>;
  /** Keys sold since `since`; tokens outstanding on every active key, whenever sold. */
  prepaid: PrepaidSummary;
  /** The payers delivered answers they did not pay for since `since` (served settled-first for a while), the most first. */
  unpaidPayers: { payer: string; count: number; amountAtomic: bigint; amountUsd: string }[];
}

/** Reads the report of the payments made since `since`, by `by` (UTC). */
export async function readLedgerReport(
  storage: { ledger: Pick<PaymentLedger, "report" | "unpaidPayers">; prepaidKeys: Pick<PrepaidKeyStore, "summary"> },
  network: NetworkDefinition,
  since: Date,
  by: ReportPeriod,
): Promise<LedgerReport> {
  const [rows, prepaid, unpaid] = await Promise.all([
    storage.ledger.report(since, by),
    storage.prepaidKeys.summary(since),
    storage.ledger.unpaidPayers(since),
  ]);
  return ledgerReport(rows, prepaid, network, since, by, unpaid);
}

/** The ledger's groups, one line per period, endpoint and model; revenue is what settled. */
export function ledgerReport(
  rows: readonly LedgerReportRow[],
  prepaid: PrepaidSummary,
  network: NetworkDefinition,
  since: Date,
  by: ReportPeriod,
  unpaid: readonly UnpaidPayer[] = [],
): LedgerReport {
  const usd = (atomic: bigint) => atomicToDecimal(atomic, network.usdc.decimals);
  const lines = new Map<string, ReportLine>();
  const total = { requests: {} as Partial<Record<PaymentStatus, number>>, revenueAtomic: 0n, unpaidAtomic: 0n };
  const statuses: Partial<Record<PaymentStatus, StatusFigures>> = {};
  const methods: Partial<Record<PaymentProtocol, StatusFigures>> = {};
  for (const row of rows) {
    const method = (methods[row.method] ??= { count: 0, amountAtomic: 0n, amountUsd: "" });
    method.count += row.count;
    if (row.status === "settled") method.amountAtomic += row.amount;
    const endpoint = row.endpoint ?? "(unrecorded)";
    const model = row.model ?? "(unrecorded)";
    const key = JSON.stringify([row.period, endpoint, model]);
    const line = lines.get(key) ?? {
      period: row.period,
      endpoint,
      model,
      requests: {},
      revenueAtomic: 0n,
      revenueUsd: "",
      unpaidAtomic: 0n,
    };
    line.requests[row.status] = (line.requests[row.status] ?? 0) + row.count;
    total.requests[row.status] = (total.requests[row.status] ?? 0) + row.count;
    const status = statuses[row.status] ?? { count: 0, amountAtomic: 0n, amountUsd: "" };
    status.count += row.count;
    status.amountAtomic += row.amount;
    statuses[row.status] = status;
    if (row.status === "settled") {
      line.revenueAtomic += row.amount;
      total.revenueAtomic += row.amount;
    }
    if (row.status === "unpaid") {
      line.unpaidAtomic += row.amount;
      total.unpaidAtomic += row.amount;
    }
    lines.set(key, line);
  }
  for (const figures of [...Object.values(statuses), ...Object.values(methods)]) {
    figures.amountUsd = usd(figures.amountAtomic);
  }
  return {
    network: network.id,
    since: since.toISOString(),
    by,
    lines: [...lines.values()].map((line) => ({ ...line, revenueUsd: usd(line.revenueAtomic) })),
    total: { ...total, revenueUsd: usd(total.revenueAtomic) },
    statuses,
    methods,
    prepaid,
    unpaidPayers: unpaid.map(({ payer, count, amount }) => ({
      payer,
      count,
      amountAtomic: amount,
      amountUsd: usd(amount),
    })),
  };
}

/** The report's lines added up over its periods: one per endpoint and model, in the report's order. */
export function byEndpointAndModel(report: LedgerReport, decimals: number): Omit<ReportLine, "period">[] {
  const grouped = new Map<string, Omit<ReportLine, "period">>();
  for (const { period: _period, ...line } of report.lines) {
    const key = JSON.stringify([line.endpoint, line.model]);
    const sum = grouped.get(key) ?? { ...line, requests: {}, revenueAtomic: 0n, unpaidAtomic: 0n };
    addFigures(sum, line);
    grouped.set(key, sum);
  }
  return [...grouped.values()]
    .map((line) => ({ ...line, revenueUsd: atomicToDecimal(line.revenueAtomic, decimals) }))
    .sort((a, b) => compare(a.endpoint, b.endpoint) || compare(a.model, b.model));
}

/** The report's lines added up per period, in period order. */
export function byPeriod(report: LedgerReport, decimals: number): ReportLine[] {
  const grouped = new Map<string, ReportLine>();
  for (const line of report.lines) {
    const sum = grouped.get(line.period) ?? {
      ...line,
      endpoint: "",
      model: "",
      requests: {},
      revenueAtomic: 0n,
      unpaidAtomic: 0n,
    };
    addFigures(sum, line);
    grouped.set(line.period, sum);
  }
  return [...grouped.values()]
    .map((line) => ({ ...line, revenueUsd: atomicToDecimal(line.revenueAtomic, decimals) }))
    .sort((a, b) => compare(a.period, b.period));
}

/** Code-point order, as the ledger's query sorts. */
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function addFigures(sum: ReportFigures, line: ReportFigures): void {
  for (const [status, count] of Object.entries(line.requests) as [PaymentStatus, number][]) {
    sum.requests[status] = (sum.requests[status] ?? 0) + count;
  }
  sum.revenueAtomic += line.revenueAtomic;
  sum.unpaidAtomic += line.unpaidAtomic;
}

/** A period's label as the ledger's report writes it: `2026-11-23` by day, `2026-11-23T14:00Z` by hour (UTC). */
export function periodOf(at: Date, by: ReportPeriod): string {
  const iso = at.toISOString();
  return by === "day" ? iso.slice(0, 10) : `${iso.slice(0, 13)}:00Z`;
}
