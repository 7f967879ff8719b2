import type { Command } from "commander";
import { ConfigurationError, loadLedgerConfig } from "../../config/env";
import type { ReportPeriod } from "../../server/payment/payment-ledger";
import { openStorage } from "../../server/storage/open-storage";
import { csv, ledgerReport, parseSince, reportRow, reportRows } from "../lib/ledger-report";
import { fail, print, table } from "../lib/output";

interface ReportOptions {
  since: string;
  by: string;
  json?: boolean;
  csv?: boolean;
}

export function registerLedgerCommand(program: Command): void {
  const ledger = program
    .command("ledger")
    .description("Read the deployment's payments ledger (DATABASE_URL and NETWORK, as the app reads them)");
  ledger
    .command("report")
    .description("Settled revenue and payments by period (UTC), endpoint and model")
    .option("--since <when>", "a date or time (UTC unless it says otherwise), or a span back from now", "30d")
    .option("--by <period>", "day or hour", "day")
    .option("--json", "print JSON (amounts as strings of atomic units and exact USD decimals)")
    .option("--csv", "print CSV")
    .addHelpText(
      "after",
      "\nExamples:\n  $ paysvc ledger report\n  $ paysvc ledger report --since 2026-11-01 --by hour --csv > november.csv\n  $ DATABASE_URL=postgres://... NETWORK=eip155:8453 paysvc ledger report --since 7d --json",
    )
    .action(async (options: ReportOptions) => {
      let since: Date;
      let config;
      try {
        if (options.json && options.csv) throw new Error("--json and --csv: choose one");
        if (options.by !== "day" && options.by !== "hour")
          throw new Error(`--by: must be day or hour, not "${options.by}"`);
        since = parseSince(options.since);
        config = loadLedgerConfig();
      } catch (error) {
        if (error instanceof ConfigurationError) console.error(error.message);
        else console.error(`paysvc: ${(error as Error).message}`);
        process.exit(2);
      }
      const by = options.by as ReportPeriod;
      try {
        const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
        try {
          const report = ledgerReport(await storage.ledger.report(since, by), config.network, since, by);
          if (options.csv) console.log(csv(reportRows(report)));
          else print(options.json === true, report, () => text(report));
        } finally {
          await storage.close();
        }
      } catch (error) {
        fail((error as Error).message);
      }
    });
}

function text(report: ReturnType<typeof ledgerReport>): string {
  const heading = `${report.network}, payments since ${report.since}, by ${report.by} (UTC)`;
  if (report.lines.length === 0) return `${heading}: none`;
  return `${heading}\n${table([...reportRows(report), reportRow("TOTAL", "", "", report.total)])}`;
}
