import type { NetworkDefinition } from "../../networks";
import type { LedgerReportRow, ReportPeriod } from "../../server/payment/payment-ledger";
import type { PaymentStatus } from "../../server/storage/payment-status";
import { atomicToDecimal } from "../../server/money";

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

export interface LedgerReport {
  network: string;
  since: string;
  by: ReportPeriod;
  lines: ReportLine[];
  total: Pick<ReportLine, "requests" | "revenueAtomic" | "revenueUsd" | "unpaidAtomic">;
}

/** The ledger's groups, one line per period, endpoint and model; revenue is what settled. */
export function ledgerReport(
  rows: readonly LedgerReportRow[],
  network: NetworkDefinition,
  since: Date,
  by: ReportPeriod,
): LedgerReport {
  const usd = (atomic: bigint) => atomicToDecimal(atomic, network.usdc.decimals);
  const lines = new Map<string, ReportLine>();
  const total = { requests: {} as Partial<Record<PaymentStatus, number>>, revenueAtomic: 0n, unpaidAtomic: 0n };
  for (const row of rows) {
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
  return {
    network: network.id,
    since: since.toISOString(),
    by,
    lines: [...lines.values()].map((line) => ({ ...line, revenueUsd: usd(line.revenueAtomic) })),
    total: { ...total, revenueUsd: usd(total.revenueAtomic) },
  };
}

/**
 * The columns of the table and the CSV: settled, the other outcomes, revenue, and what went unpaid; a heading, then
 * each line.
 */
export function reportRows(report: LedgerReport): string[][] {
  return [
    [
      "PERIOD",
      "ENDPOINT",
      "MODEL",
      "SETTLED",
      "NOT_CHARGED",
      "FAILED",
      "UNSETTLED",
      "UNPAID",
      "OPEN",
      "REVENUE_USD",
      "REVENUE_ATOMIC",
      "UNPAID_ATOMIC",
    ],
    ...report.lines.map((line) => reportRow(line.period, line.endpoint, line.model, line)),
  ];
}

/** One row of those columns; the table's total is one too. */
export function reportRow(
  period: string,
  endpoint: string,
  model: string,
  figures: Pick<ReportLine, "requests" | "revenueAtomic" | "revenueUsd" | "unpaidAtomic">,
): string[] {
  const of = (...statuses: PaymentStatus[]) =>
    String(statuses.reduce((sum, status) => sum + (figures.requests[status] ?? 0), 0));
  // Open: not final yet (in flight, or settle_unknown waiting for reconciliation).
  const counts = [
    of("settled"),
    of("not_charged"),
    of("failed"),
    of("unsettled"),
    of("unpaid"),
    of("pending", "verified", "settle_unknown"),
  ];
  const { revenueUsd, revenueAtomic, unpaidAtomic } = figures;
  return [period, endpoint, model, ...counts, revenueUsd, revenueAtomic.toString(), unpaidAtomic.toString()];
}

/** RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. */
export function csv(rows: readonly string[][]): string {
  const field = (value: string) => (/[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value);
  return rows.map((row) => row.map(field).join(",")).join("\r\n");
}

/** `--since`: a date or time (ISO 8601, UTC unless it says otherwise), or a span back from now: 12h, 7d. */
export function parseSince(value: string, now = Date.now()): Date {
  const span = /^(\d+)([hd])$/.exec(value.trim());
  if (span) return new Date(now - Number(span[1]) * (span[2] === "h" ? 3_600_000 : 86_400_000));
  if (/^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(value.trim())) {
    const text = value.trim();
    const date = new Date(/[T ]/.test(text) && !/(Z|[+-]\d{2}:?\d{2})$/.test(text) ? `${text}Z` : text);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new Error(`--since: "${value}" is neither a date such as 2026-11-01 (UTC) nor a span such as 24h or 7d`);
}
