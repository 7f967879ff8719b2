import type { Command } from "commander";
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { ConfigurationError } from "../../config/env";
import { EMBEDDED_FACILITATOR_URL, EMBEDDED_CHAIN_URL } from "../../config/embedded-stack";
import { loadLedgerConfig, loadReconcileConfig } from "../../config/ledger-config";
import { gatewayFor } from "../../server/payment/gateway-for";
import { chainReaderFor } from "../../server/payment/chain-reader-for";
import { LedgerReconciler } from "../../server/reconcile/reconcile-ledger";
import { startBuiltInFacilitator } from "../lib/facilitator-server";
import { reconcileText } from "../lib/reconcile-output";
import type { ReportPeriod } from "../../server/payment/payment-ledger";
import { openStorage } from "../../server/storage/open-storage";
import { ATTENTION_STATUSES, readLedgerReport, type LedgerReport } from "../../server/ledger-report/ledger-report";
import { csv, parseSince, reportRow, reportRows } from "../lib/ledger-report";
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
          const report = await readLedgerReport(storage, config.network, since, by);
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
      `
Reads DATABASE_URL, NETWORK, CHAIN_RPC_URL (else the network's public RPC) and the facilitator as the app does:
FACILITATOR_URL settles; without it, CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY start the built-in facilitator of
\`paysvc start\` on CHAIN_RPC_URL for the run. With neither CHAIN_RPC_URL nor FACILITATOR_URL set: the embedded stack
of \`npm start\` at its default local URLs, chain ${EMBEDDED_CHAIN_URL} and facilitator ${EMBEDDED_FACILITATOR_URL}.
--check settles nothing and needs no facilitator.
Exit codes: 1 when the chain contradicts the ledger or cannot be read, 2 on a bad configuration.

Examples:
  $ paysvc ledger reconcile --check
  $ paysvc ledger reconcile --all --json
  $ CHAIN_RPC_URL=https://rpc.example FACILITATOR_PRIVATE_KEY=0x... DATABASE_URL=... paysvc ledger reconcile`,
    )
    .action(async (options: ReconcileOptions) => {
      const check = options.check === true;
      let config;
      try {
        config = loadReconcileConfig(undefined, { check });
      } catch (error) {
        usageError(error);
      }
      if (config.embeddedStack) {
        console.error(
          `paysvc ledger reconcile: none of CHAIN_RPC_URL, FACILITATOR_URL and FACILITATORS is set: the embedded stack of \`npm start\`, chain ${config.chainRpcUrl}, facilitator ${EMBEDDED_FACILITATOR_URL}`,
        );
      }
      let failures = 0;
      let builtIn: Awaited<ReturnType<typeof startBuiltInFacilitator>> | undefined;
      try {
        const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
        try {
          let { facilitators } = config;
          // A check settles nothing: the built-in facilitator is started only for a run that may settle.
          if (config.builtIn && !check) {
            const started = await startBuiltInFacilitator(config.network, config.builtIn);
            builtIn = started;
            facilitators = facilitators.map((entry) =>
              entry.builtIn && !entry.url ? { ...entry, url: started.url, auth: started.auth } : entry,
            );
            console.error(
              `paysvc ledger reconcile: built-in facilitator ${started.url} on ${config.builtIn.rpcUrl}, settling from ${started.address}`,
            );
          }
          const usable = facilitators.filter((entry) => entry.url);
          const reconciler = new LedgerReconciler({
            network: config.network,
            ledger: storage.ledger,
            prepaidKeys: storage.prepaidKeys,
            reader: chainReaderFor(config.network, config.chainRpcUrl),
            gateway:
              check || usable.length === 0
                ? undefined
                : gatewayFor({
                    network: config.network,
                    // Settling sends what the payer signed (its own pay-to); the gateway's is for quotes.
                    payTo: "",
                    facilitators: usable,
                    facilitatorTimeoutMs: config.facilitatorTimeoutMs,
                    facilitatorBreaker: config.facilitatorBreaker,
                    paymentTimeoutSeconds: config.paymentTimeoutSeconds,
                    upto: true,
                    chainRpcUrl: config.chainRpcUrl,
                  }),
            paymentTimeoutMs: config.paymentTimeoutSeconds * 1000,
            channels: {
              channels: storage.channels,
              chainRpcUrl: config.chainRpcUrl,
              contract: BATCH_SETTLEMENT_ADDRESS,
              payTo: config.channelPayTo,
            },
          });
          const report = await reconciler.run({ check, all: options.all === true });
          print(options.json === true, report, () => reconcileText(report, config.network));
          failures = report.outcomes.mismatch.count + report.outcomes.error.count;
          failures += report.channels.filter((channel) => channel.outcome === "mismatch").length;
        } finally {
          await builtIn?.stop();
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

function text(report: LedgerReport): string {
  const heading = `${report.network}, payments since ${report.since}, by ${report.by} (UTC)`;
  if (report.lines.length === 0) return `${heading}: none`;
  const { prepaid, statuses } = report;
  const outcomes = ATTENTION_STATUSES.map((status) => {
    const figures = statuses[status];
    return figures
      ? `${status} ${figures.count} (${figures.amountUsd} USD, ${figures.amountAtomic} atomic)`
      : `${status} 0`;
  });
  return [
    heading,
    `prepaid: ${count(prepaid.keysSold, "key")} sold (${prepaid.tokensSold} tokens); ${prepaid.tokensOutstanding} tokens outstanding on ${count(prepaid.activeKeys, "active key")}`,
    `needing a look: ${outcomes.join(", ")}`,
    `by protocol: ${byProtocol(report)}`,
    table([...reportRows(report), reportRow("TOTAL", "", "", report.total)]),
    ...unpaidPayers(report),
  ].join("\n");
}

/** The payers served answers they did not pay for: each served settled-first for SETTLEMENT_STRICT_SECONDS. */
function unpaidPayers({ unpaidPayers: payers }: LedgerReport): string[] {
  if (payers.length === 0) return [];
  const rows = payers.map(({ payer, count, amountUsd, amountAtomic }) => [
    payer,
    String(count),
    amountUsd,
    amountAtomic.toString(),
  ]);
  return ["unpaid payers:", table([["PAYER", "UNPAID", "UNPAID_USD", "UNPAID_ATOMIC"], ...rows])];
}

/** Each protocol's payments and what they settled: `x402 12 payments (0.0123 USD settled), mpp 3 payments (...)`. */
function byProtocol({ methods }: LedgerReport): string {
  return Object.entries(methods)
    .map(([method, figures]) => `${method} ${count(figures.count, "payment")} (${figures.amountUsd} USD settled)`)
    .join(", ");
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;
