import type { Command } from "commander";
import { ConfigurationError } from "../../config/env";
import { loadLedgerConfig, loadReconcileConfig } from "../../config/ledger-config";
import { PaymentGateway } from "../../server/payment/payment-gateway";
import { chainReaderFor } from "../../server/reconcile/chain-reader-for";
import { LedgerReconciler } from "../../server/reconcile/reconcile-ledger";
import { reconcileText } from "../lib/reconcile-output";
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
        usageError(error);
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
  registerReconcile(ledger);
}

interface ReconcileOptions {
  check?: boolean;
  all?: boolean;
  json?: boolean;
}

function registerReconcile(ledger: Command): void {
  ledger
    .command("reconcile")
    .description(
      "Ask the chain what became of every payment not known to be final, and record it: settled, settled now through the facilitator (unused, still valid, work delivered), or unsettled (expired). Exits 1 when the chain contradicts the ledger or cannot be read",
    )
    .option("--check", "only report what a run would do; write nothing and settle nothing")
    .option("--all", "read every row, final ones too, and check them against the chain")
    .option("--json", "print JSON (amounts as strings of atomic units)")
    .addHelpText(
      "after",
      "\nReads DATABASE_URL, NETWORK, CHAIN_RPC_URL (else the network's public RPC) and FACILITATOR_URL as the app does;\nwith neither of the last two set, the embedded stack of `npm start` on its local ports.\n\nExamples:\n  $ paysvc ledger reconcile --check\n  $ paysvc ledger reconcile --all --json",
    )
    .action(async (options: ReconcileOptions) => {
      let config;
      try {
        config = loadReconcileConfig();
      } catch (error) {
        usageError(error);
      }
      let failures = 0;
      try {
        const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
        try {
          const reconciler = new LedgerReconciler({
            network: config.network,
            ledger: storage.ledger,
            prepaidKeys: storage.prepaidKeys,
            reader: chainReaderFor(config.network, config.chainRpcUrl),
            gateway: new PaymentGateway({
              network: config.network,
              // Settling sends what the payer signed (its own pay-to); the gateway's is for quotes.
              payTo: "",
              facilitatorUrl: config.facilitatorUrl,
              facilitatorTimeoutMs: config.facilitatorTimeoutMs,
              paymentTimeoutSeconds: config.paymentTimeoutSeconds,
            }),
            paymentTimeoutMs: config.paymentTimeoutSeconds * 1000,
          });
          const report = await reconciler.run({ check: options.check === true, all: options.all === true });
          print(options.json === true, report, () => reconcileText(report, config.network));
          failures = report.outcomes.mismatch.count + report.outcomes.error.count;
        } finally {
          await storage.close();
        }
      } catch (error) {
        fail((error as Error).message);
      }
      if (failures > 0) process.exit(1);
    });
}

/** A bad option or configuration: one line each, exit 2. */
function usageError(error: unknown): never {
  if (error instanceof ConfigurationError) console.error(error.message);
  else console.error(`paysvc: ${(error as Error).message}`);
  process.exit(2);
}

function text(report: ReturnType<typeof ledgerReport>): string {
  const heading = `${report.network}, payments since ${report.since}, by ${report.by} (UTC)`;
  if (report.lines.length === 0) return `${heading}: none`;
  return `${heading}\n${table([...reportRows(report), reportRow("TOTAL", "", "", report.total)])}`;
}
