import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PaymentGateway } from "../server/payment/payment-gateway";
import { chainReaderFor } from "../server/reconcile/chain-reader-for";
import { LedgerReconciler } from "../server/reconcile/reconcile-ledger";
import { openStorage } from "../server/storage/open-storage";
import type { Storage } from "../server/storage/storage";
import { headerAuth } from "../cli/lib/facilitator-server";
import { polygon, stack, stackFacilitator, usdcBalance } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

/*
 * Runs after every other e2e file (the sequencer in vitest.config.ts): the whole shared ledger, written by every
 * journey of the run, is read back against the shared chain.
 */
describe("the e2e ledger after every journey", () => {
  let storage: Storage;
  beforeAll(async () => {
    storage = await openStorage(`file:${stack().databasePath}`, { poolSize: 1 });
  });
  afterAll(() => storage?.close());

  it("has no row the chain contradicts, and settled exactly what the pay-to received", async () => {
    const reconciler = new LedgerReconciler({
      network: polygon,
      ledger: storage.ledger,
      prepaidKeys: storage.prepaidKeys,
      reader: chainReaderFor(polygon, stack().chainRpcUrl),
      gateway: new PaymentGateway({
        network: polygon,
        payTo: stack().payTo,
        facilitators: [
          { name: "facilitator", url: stack().facilitatorUrl, auth: headerAuth(stack().facilitatorAuthHeader) },
        ],
        facilitatorTimeoutMs: 10_000,
        paymentTimeoutSeconds: 300,
      }),
      paymentTimeoutMs: 300_000,
      channels: {
        channels: storage.channels,
        chainRpcUrl: stack().chainRpcUrl,
        contract: BATCH_SETTLEMENT_ADDRESS,
        payTo: stack().payTo,
      },
    });
    const report = await reconciler.run({ check: true, all: true });
    // The channels the journeys paid from: each one's rows add up to its running total, claimed or not.
    expect(report.channels.length).toBeGreaterThan(0);
    expect(report.channels.filter((channel) => channel.outcome !== "agrees")).toEqual([]);
    expect(report.checked).toBeGreaterThan(50);
    expect(report.rows.filter((row) => row.outcome === "mismatch" || row.outcome === "error")).toEqual([]);
    expect(report.outcomes.agrees.count).toBeGreaterThan(40);
    // What channels paid reached the pay-to through the channel contract's payouts (a fresh chain: all of them
    // during the run), and nothing claimed waits in the contract.
    const [payouts] = report.payouts;
    expect(payouts).toMatchObject({ awaitingPayout: 0n });
    const received = (await usdcBalance(stack().payTo)) - BigInt(stack().payToAtStart);
    expect(report.settledAmount + payouts!.paidOut).toBe(received);
  });

  it("is what `paysvc ledger reconcile --all --check` prints too, with exit code 0", async () => {
    const { code, stdout } = await paysvc(["ledger", "reconcile", "--all", "--check"], 60_000, {
      NETWORK: "eip155:137",
      DATABASE_URL: `file:${stack().databasePath}`,
      CHAIN_RPC_URL: stack().chainRpcUrl,
      ...stackFacilitator(),
    });
    expect(code).toBe(0);
    expect(stdout).toMatch(/^eip155:137: \d+ rows \(all of them\) reconciled with the chain \(checked only/);
    expect(stdout).toMatch(/^mismatch\s+0\s/m);
  });
});
