import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentGateway } from "../server/payment/payment-gateway";
import { chainReaderFor } from "../server/payment/chain-reader-for";
import { LedgerReconciler, type ReconcileReport } from "../server/reconcile/reconcile-ledger";
import { openStorage } from "../server/storage/open-storage";
import type { Storage } from "../server/storage/storage";
import { headerAuth } from "../cli/lib/facilitator-server";
import { allStacks, polygon, stackFacilitator, usdcBalance } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

type SharedStack = ReturnType<typeof allStacks>[number];

/*
 * Runs after every other e2e file (its own project, a later `sequence.groupOrder` in vitest.config.ts): the ledger
 * of each worker's shared stack, written by every journey that worker ran, is read back against that stack's chain.
 * The journeys are spread over the workers' stacks, so the counts that say "many journeys were checked" are summed
 * over them; every row of every stack must agree.
 */
describe("the e2e ledgers after every journey", () => {
  const storages: Storage[] = [];
  beforeAll(async () => {
    for (const stack of allStacks()) storages.push(await openStorage(`file:${stack.databasePath}`, { poolSize: 1 }));
  });
  afterAll(() => Promise.all(storages.map((storage) => storage.close())));

  it("have no row the chain contradicts, and settled exactly what each pay-to received", async () => {
    const reports: ReconcileReport[] = [];
    for (const [index, stack] of allStacks().entries()) {
      const report = await reconcile(stack, storages[index]!);
      reports.push(report);
      expect(report.channels.filter((channel) => channel.outcome !== "agrees")).toEqual([]);
      expect(report.rows.filter((row) => row.outcome === "mismatch" || row.outcome === "error")).toEqual([]);
      // What channels paid reached the pay-to through the channel contract's payouts (a fresh chain: all of them
      // during the run), and nothing claimed waits in the contract.
      const [payouts] = report.payouts;
      expect(payouts).toMatchObject({ awaitingPayout: 0n });
      const received = (await usdcBalance(stack.payTo, stack.chainRpcUrl)) - BigInt(stack.payToAtStart);
      expect(report.settledAmount + payouts!.paidOut).toBe(received);
    }
    // The channels the journeys paid from: each one's rows add up to its running total, claimed or not.
    expect(reports.reduce((sum, report) => sum + report.channels.length, 0)).toBeGreaterThan(0);
    expect(reports.reduce((sum, report) => sum + report.checked, 0)).toBeGreaterThan(50);
    expect(reports.reduce((sum, report) => sum + report.outcomes.agrees.count, 0)).toBeGreaterThan(40);
  });

  it("is what `paysvc ledger reconcile --all --check` prints too, with exit code 0", async () => {
    for (const stack of allStacks()) {
      const { code, stdout } = await paysvc(["ledger", "reconcile", "--all", "--check"], 60_000, {
        NETWORK: "eip155:137",
        DATABASE_URL: `file:${stack.databasePath}`,
        CHAIN_RPC_URL: stack.chainRpcUrl,
        ...stackFacilitator(stack),
      });
      expect(code).toBe(0);
      expect(stdout).toMatch(/^eip155:137: \d+ rows \(all of them\) reconciled with the chain \(checked only/);
      expect(stdout).toMatch(/^mismatch\s+0\s/m);
    }
  });
});

function reconcile(stack: SharedStack, storage: Storage): Promise<ReconcileReport> {
  const reconciler = new LedgerReconciler({
    network: polygon,
    ledger: storage.ledger,
    prepaidKeys: storage.prepaidKeys,
    reader: chainReaderFor(polygon, stack.chainRpcUrl),
    gateway: new PaymentGateway({
      network: polygon,
      payTo: stack.payTo,
      facilitators: [{ name: "facilitator", url: stack.facilitatorUrl, auth: headerAuth(stack.facilitatorAuthHeader) }],
      facilitatorTimeoutMs: 10_000,
      paymentTimeoutSeconds: 300,
    }),
    paymentTimeoutMs: 300_000,
    channels: {
      channels: storage.channels,
      chainRpcUrl: stack.chainRpcUrl,
      contract: BATCH_SETTLEMENT_ADDRESS,
      payTo: stack.payTo,
    },
  });
  return reconciler.run({ check: true, all: true });
}
