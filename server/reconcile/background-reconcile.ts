import type { ChannelStorage } from "@x402/evm/batch-settlement/server";
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { chainRpcUrlOf, type ServiceConfig } from "../../config/service-config";
import type { PrepaidKeyStore } from "../prepaid/prepaid-key-store";
import { logEvent } from "../core/log";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import { chainReaderFor } from "../payment/chain-reader-for";
import type { LastReconciliation } from "./last-reconciliation";
import { LedgerReconciler, reconcileOutcomes } from "./reconcile-ledger";

/**
 * Reconciles the ledger's open rows every RECONCILE_INTERVAL_SECONDS in this process, as `paysvc ledger
 * reconcile` does (safe beside other instances doing the same). One run at a time; the timer does not keep the
 * process alive. A run that changed or found something is logged; mismatches as errors. Returns what stops it: no
 * run starts after, and the one under way is waited for.
 */
export function reconcileInBackground(
  config: ServiceConfig,
  services: {
    ledger: PaymentLedger;
    gateway: PaymentGateway;
    metrics: ServiceMetrics;
    prepaidKeys: PrepaidKeyStore;
    channels: ChannelStorage;
    /** Where each run's outcome is kept (the operator's page shows the last). */
    last: LastReconciliation;
  },
): () => Promise<void> {
  if (config.reconcileIntervalMs === 0) return async () => undefined;
  let running: Promise<void> | undefined;
  const run = async () => {
    // A reader per run: what it caches of the chain's history is for one pass.
    const reconciler = new LedgerReconciler({
      network: config.network,
      ledger: services.ledger,
      gateway: services.gateway,
      reader: chainReaderFor(config.network, chainRpcUrlOf(config)),
      paymentTimeoutMs: config.paymentTimeoutSeconds * 1000,
      prepaidKeys: services.prepaidKeys,
      channels: {
        channels: services.channels,
        chainRpcUrl: chainRpcUrlOf(config),
        contract: BATCH_SETTLEMENT_ADDRESS,
        payTo: config.channels ? config.payTo : undefined,
      },
    });
    const report = await reconciler.run({ check: false, all: false });
    services.last.record({ finishedAt: new Date(), report });
    for (const outcome of reconcileOutcomes) services.metrics.reconciledRows(outcome, report.outcomes[outcome].count);
    const { settled, recovered, unsettled, mismatch, error } = report.outcomes;
    const channels = report.channels.filter((channel) => channel.outcome !== "agrees");
    for (const channel of channels) {
      logEvent(channel.outcome === "mismatch" ? "error" : "info", "channel_reconciled", {
        ...channel,
        charged: channel.charged.toString(),
        ledgerCharged: channel.ledgerCharged.toString(),
        claimedOnChain: channel.claimedOnChain.toString(),
      });
    }
    for (const payout of report.payouts.filter((payout) => payout.awaitingPayout > 0n)) {
      logEvent("warn", "channel_payout_awaited", {
        receiver: payout.receiver,
        claimed: payout.claimed.toString(),
        paidOut: payout.paidOut.toString(),
        awaitingPayout: payout.awaitingPayout.toString(),
      });
    }
    if (settled.count + recovered.count + unsettled.count + mismatch.count + error.count === 0) return;
    logEvent(mismatch.count + error.count > 0 ? "error" : "info", "ledger_reconciled", {
      checked: report.checked,
      ...Object.fromEntries(reconcileOutcomes.map((outcome) => [outcome, report.outcomes[outcome].count])),
      rows: report.rows.filter((row) => row.outcome !== "open").map((row) => ({ ...row, amount: String(row.amount) })),
    });
  };
  const timer = setInterval(() => {
    if (running) return;
    running = run()
      .catch((error: unknown) => {
        services.last.record({ finishedAt: new Date(), error: (error as Error).message });
        logEvent("error", "ledger_reconcile_failed", { error: (error as Error).message });
      })
      .finally(() => {
        running = undefined;
      });
  }, config.reconcileIntervalMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
  };
}
