import {
  countIn,
  OPEN_STATUSES,
  type LedgerReport,
  type ReportFigures,
} from "../../server/ledger-report/ledger-report";
import type { PaymentStatus } from "../../server/core/payment-status";

// The report itself (its queries and sums) is server/ledger-report/ledger-report.ts, which the operator's page
// shares; this file only prints it.

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
export function reportRow(period: string, endpoint: string, model: string, figures: ReportFigures): string[] {
  const of = (...statuses: PaymentStatus[]) => String(countIn(figures, statuses));
  const counts = [of("settled"), of("not_charged"), of("failed"), of("unsettled"), of("unpaid"), of(...OPEN_STATUSES)];
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
