import type { ReconcileReport } from "./reconcile-ledger";

/** A background reconciliation run: when it ended, and what it found, or why it failed. */
export type ReconciliationRun =
  | { finishedAt: Date; report: ReconcileReport; error?: undefined }
  | { finishedAt: Date; report?: undefined; error: string };

/**
 * This process's background reconciliations (background-reconcile.ts), for the operator's page: the last run, and
 * the last that found something (a row settled, recovered, unsettled, contradicted, unreadable, or not readable, or
 * a claimed sum the contract has not paid out), which a quiet run after it would otherwise hide.
 */
export class LastReconciliation {
  private latest: ReconciliationRun | undefined;
  private finding: ReconciliationRun | undefined;

  record(run: ReconciliationRun): void {
    this.latest = run;
    if (run.error !== undefined || foundSomething(run.report)) this.finding = run;
  }

  get last(): ReconciliationRun | undefined {
    return this.latest;
  }

  get lastFinding(): ReconciliationRun | undefined {
    return this.finding;
  }
}

function foundSomething(report: ReconcileReport): boolean {
  const { settled, recovered, unsettled, mismatch, unreadable, error } = report.outcomes;
  return (
    [settled, recovered, unsettled, mismatch, unreadable, error].some((outcome) => outcome.count > 0) ||
    report.payouts.some((payout) => payout.awaitingPayout > 0n)
  );
}
