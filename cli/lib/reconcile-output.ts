import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal } from "../../server/core/money";
import { reconcileOutcomes, type ReconcileReport } from "../../server/reconcile/reconcile-ledger";
import { table } from "./output";

/** The reconcile report as text: the outcomes with their amounts, then every row that did not simply agree. */
export function reconcileText(report: ReconcileReport, network: NetworkDefinition): string {
  const usd = (atomic: bigint) => atomicToDecimal(atomic, network.usdc.decimals);
  const rowsRead = report.scope === "all" ? "rows (all of them)" : "rows not known to be final";
  const mode = report.check ? "checked only, nothing written; outcomes say what a run would do" : "applied";
  const heading = `${report.network}: ${report.checked} ${rowsRead} reconciled with the chain (${mode})`;
  const outcomes = table([
    ["OUTCOME", "ROWS", "AMOUNT_USD", "AMOUNT_ATOMIC"],
    ...reconcileOutcomes.map((outcome) => {
      const { count, amount } = report.outcomes[outcome];
      return [outcome, String(count), usd(amount), amount.toString()];
    }),
  ]);
  const lines = [heading, outcomes];
  if (report.rows.length > 0) {
    lines.push(
      "",
      table([
        ["ID", "STATUS", "OUTCOME", "AMOUNT_ATOMIC", "TRANSACTION", "DETAIL"],
        ...report.rows.map((row) => [
          String(row.id),
          row.status,
          row.outcome,
          row.amount.toString(),
          row.transaction ?? "",
          row.detail ?? "",
        ]),
      ]),
    );
  }
  lines.push("", `settled in the rows read: ${usd(report.settledAmount)} USD (${report.settledAmount} atomic units)`);
  if (report.channels.length > 0) {
    lines.push(
      "",
      table([
        ["CHANNEL", "OUTCOME", "CHARGED_ATOMIC", "LEDGER_ATOMIC", "CLAIMED_ON_CHAIN", "DETAIL"],
        ...report.channels.map((channel) => [
          channel.channel,
          channel.outcome,
          channel.charged.toString(),
          channel.ledgerCharged.toString(),
          channel.claimedOnChain.toString(),
          channel.detail ?? "",
        ]),
      ]),
    );
  }
  for (const payout of report.payouts) {
    const held =
      payout.awaitingPayout > 0n
        ? `${usd(payout.awaitingPayout)} USD (${payout.awaitingPayout} atomic) claimed and not yet paid out: \`paysvc channels claim\` pays it out`
        : "nothing claimed awaits a payout";
    lines.push(
      "",
      `channel contract, receiver ${payout.receiver}: claimed ${payout.claimed}, paid out ${payout.paidOut} atomic units; ${held}`,
    );
  }
  const mismatches = report.outcomes.mismatch.count;
  if (mismatches > 0)
    lines.push(`${mismatches} mismatch${mismatches === 1 ? "" : "es"}: the chain disagrees with the ledger`);
  const errors = report.outcomes.error.count;
  if (errors > 0) lines.push(`${errors} row${errors === 1 ? "" : "s"} not checked: the chain could not be read`);
  return lines.join("\n");
}
