import Database from "better-sqlite3";
import { createTestClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import {
  chatBody,
  craftedPayment,
  ledgerRow,
  officialPayment,
  postJson,
  quote,
  stack,
  stackFacilitator,
  uptoPaymentClient,
  usdcBalance,
} from "./support/payments";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import { atomicToDecimal } from "../server/core/money";
import { paysvc } from "./support/run-paysvc";

const payer = () => stack().payers[5]!;
const PATH = "/v1/chat/completions";

/** `paysvc ledger reconcile` over the shared stack's ledger, chain and (real) facilitator. */
async function reconcile(...args: string[]) {
  const { code, stdout, stderr } = await paysvc(["ledger", "reconcile", "--json", ...args], 60_000, {
    NETWORK: "eip155:137",
    DATABASE_URL: `file:${stack().databasePath}`,
    CHAIN_RPC_URL: stack().chainRpcUrl,
    ...stackFacilitator(),
  });
  if (!stdout.startsWith("{")) throw new Error(`reconcile printed no report (exit ${code}): ${stderr}`);
  const report = JSON.parse(stdout) as {
    outcomes: Record<string, { count: number; amount: string }>;
    rows: { id: number; outcome: string; transaction?: string; amount: string; detail?: string }[];
  };
  return { code, report, stderr };
}

/** The ledger row of a payment once it has `status` (within `withinMs`); the last one read otherwise. */
async function rowWithStatus(signature: string, status: string, withinMs = 5_000) {
  const deadline = Date.now() + withinMs;
  let row = ledgerRow(signature)!;
  while (row.status !== status && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    row = ledgerRow(signature)!;
  }
  expect(row).toMatchObject({ status });
  return row;
}

const rowOf = (report: Awaited<ReturnType<typeof reconcile>>["report"], id: unknown) =>
  report.rows.find((row) => row.id === id);

describe("paysvc ledger reconcile", () => {
  let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;
  let app: Awaited<ReturnType<typeof startExtraApp>>;

  beforeAll(async () => {
    // An app whose facilitator is a proxy that can hold or drop /settle past the app's 1.5 s timeout.
    proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    app = await startExtraApp({ FACILITATOR_URL: proxy.url, FACILITATOR_TIMEOUT_MS: "1500" });
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.stop();
  });

  /** A paid chat through the app, paid by the official client; the work is delivered whatever the settle does. */
  async function paidChat(content: string, sign = officialPayment) {
    const paymentRequired = await quote(PATH, chatBody(content), app.url);
    const signature = await sign(payer().privateKey, paymentRequired);
    const response = await postJson(PATH, chatBody(content), { "PAYMENT-SIGNATURE": signature }, app.url);
    expect(response.status).toBe(200);
    expect((await response.json()).choices[0].message.content).toBeTypeOf("string");
    return { signature, amount: BigInt(paymentRequired.accepts[0]!.amount) };
  }

  it("marks a settle that timed out and landed later as settled, with its transaction and amount", async () => {
    proxy.setMode({ kind: "hold", holdMs: 2_500 });
    const before = await usdcBalance(payer().address);
    const { signature, amount } = await paidChat("held settle");
    const row = ledgerRow(signature)!;
    expect(row).toMatchObject({ status: "settle_unknown", transaction: null });
    // The held settle reaches the facilitator after the app gave up, and settles.
    const late = await proxy.lastForwarded()!;
    expect(late).toMatchObject({ success: true });
    expect(await usdcBalance(payer().address)).toBe(before - amount);

    const { code, report } = await reconcile();
    expect(code).toBe(0);
    expect(rowOf(report, row.id)).toMatchObject({
      outcome: "settled",
      transaction: late.transaction,
      amount: amount.toString(),
    });
    expect(ledgerRow(signature)).toMatchObject({ status: "settled", transaction: late.transaction });
    expect(await usdcBalance(payer().address)).toBe(before - amount);
  });

  it("settles a payment whose settle never reached the facilitator, once, even with two runs at once", async () => {
    proxy.setMode({ kind: "drop" });
    const before = await usdcBalance(payer().address);
    const { signature, amount } = await paidChat("dropped settle");
    const row = ledgerRow(signature)!;
    expect(row).toMatchObject({ status: "settle_unknown" });
    expect(await usdcBalance(payer().address)).toBe(before);

    const check = await reconcile("--check");
    expect(check.code).toBe(0);
    expect(rowOf(check.report, row.id)).toMatchObject({ outcome: "recovered" });
    expect(ledgerRow(signature)).toMatchObject({ status: "settle_unknown" });

    const runs = await Promise.all([reconcile(), reconcile()]);
    expect(runs.map((run) => run.code)).toEqual([0, 0]);
    const outcomes = runs.map((run) => rowOf(run.report, row.id)?.outcome);
    expect(outcomes).toContain("recovered");
    const settled = ledgerRow(signature)!;
    expect(settled).toMatchObject({ status: "settled" });
    expect(settled.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(await usdcBalance(payer().address)).toBe(before - amount);
    // Final now: a later run does not read it, and with --all it agrees with the chain.
    const again = await reconcile("--all");
    expect(rowOf(again.report, row.id)).toBeUndefined();
  });

  it("settles a dropped upto settlement for what its call was charged, found on chain by its Permit2 nonce", async () => {
    proxy.setMode({ kind: "drop" });
    const before = await usdcBalance(payer().address);
    const body = chatBody("dropped upto settle", { max_tokens: 2000 });
    const paymentRequired = await quote(PATH, body, app.url);
    const upto = paymentRequired.accepts.find((entry) => entry.scheme === "upto")!;
    const payload = await uptoPaymentClient(payer().privateKey).createPaymentPayload({
      ...paymentRequired,
      accepts: [upto],
    });
    const signature = encodePaymentSignatureHeader(payload);
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, app.url);
    expect(response.status).toBe(200);
    const cost = ((await response.json()) as { usage: { cost: string } }).usage.cost;
    const row = ledgerRow(signature)!;
    // Delivered, the settlement's outcome unknown: the row keeps what the call was charged, below the maximum.
    expect(row).toMatchObject({ status: "settle_unknown", scheme: "upto", amount: upto.amount });
    const charged = BigInt(row.settled_amount as string);
    expect(atomicToDecimal(charged, 6)).toBe(cost);
    expect(charged).toBeLessThan(BigInt(upto.amount));
    expect(await usdcBalance(payer().address)).toBe(before);

    const { code, report } = await reconcile();
    expect(code).toBe(0);
    expect(rowOf(report, row.id)).toMatchObject({ outcome: "recovered", amount: charged.toString() });
    expect(ledgerRow(signature)).toMatchObject({ status: "settled", settled_amount: charged.toString() });
    expect(await usdcBalance(payer().address)).toBe(before - charged);
    // Final now, and with --all the chain's transfer (read from the proxy's call with this nonce) agrees.
    const again = await reconcile("--all");
    expect(again.report.outcomes.mismatch!.count).toBe(0);
    expect(rowOf(again.report, row.id)).toBeUndefined();
  });

  it("marks one unused past its validBefore as unsettled, charges nothing, and voids a key it bought", async () => {
    proxy.setMode({ kind: "drop" });
    const before = await usdcBalance(payer().address);
    // Valid for 9 s: enough for the facilitator's verify (it wants 6 s left), short enough to wait out.
    const validBefore = Math.floor(Date.now() / 1000) + 9;
    const expiring = (key: `0x${string}`, paymentRequired: Awaited<ReturnType<typeof quote>>) =>
      craftedPayment({
        signer: privateKeyToAccount(key),
        paymentRequired,
        authorization: { validBefore: String(validBefore) },
      });
    const { signature } = await paidChat("expiring settle", expiring);
    const row = ledgerRow(signature)!;
    expect(row).toMatchObject({ status: "settle_unknown" });
    // A prepaid key bought the same way: its code is given out while the settlement's outcome is unknown.
    const pack = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
    const keySignature = await expiring(payer().privateKey, await quote("/prepaid/codes", pack, app.url));
    const bought = await postJson("/prepaid/codes", pack, { "PAYMENT-SIGNATURE": keySignature }, app.url);
    expect(bought.status).toBe(201);
    const { code: keyCode } = (await bought.json()) as { code: string };
    const useKey = () =>
      postJson(PATH, chatBody("a key never paid for"), { authorization: `Bearer ${keyCode}` }, app.url);
    expect((await useKey()).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, validBefore * 1000 - Date.now() + 1_000));
    // The chain's time passes validBefore with its next block.
    await createTestClient({ mode: "anvil", transport: http(stack().chainRpcUrl) }).mine({ blocks: 1 });

    const { code, report } = await reconcile();
    expect(code).toBe(0);
    expect(rowOf(report, row.id)).toMatchObject({ outcome: "unsettled" });
    expect(ledgerRow(signature)).toMatchObject({
      status: "unsettled",
      failure_reason: "the authorization expired before it was settled",
    });
    expect(ledgerRow(keySignature)).toMatchObject({ status: "unsettled" });
    expect(rowOf(report, ledgerRow(keySignature)!.id)?.detail).toContain("the prepaid key it bought is void");
    expect((await useKey()).status).toBe(401);
    expect(await usdcBalance(payer().address)).toBe(before);
  });

  it("reports a row whose amount the chain contradicts, and exits 1", async () => {
    proxy.setMode({ kind: "forward" });
    const { signature, amount } = await paidChat("settled normally");
    // A whole answer goes out before the ledger records its settlement.
    const row = await rowWithStatus(signature, "settled");
    const edit = (value: bigint) => {
      const database = new Database(stack().databasePath);
      try {
        database.prepare("update payments set amount = ? where id = ?").run(value.toString(), row.id);
      } finally {
        database.close();
      }
    };
    edit(amount + 1n);
    try {
      const { code, report } = await reconcile("--all", "--check");
      expect(code).toBe(1);
      expect(report.outcomes.mismatch!.count).toBe(1);
      expect(rowOf(report, row.id)).toMatchObject({
        outcome: "mismatch",
        detail: `the chain transferred ${amount} atomic units, the ledger says ${amount + 1n}`,
      });
      const text = await paysvc(["ledger", "reconcile", "--all", "--check"], 60_000, {
        NETWORK: "eip155:137",
        DATABASE_URL: `file:${stack().databasePath}`,
        CHAIN_RPC_URL: stack().chainRpcUrl,
        ...stackFacilitator(),
      });
      expect(text.code).toBe(1);
      expect(text.stdout).toMatch(/^mismatch\s+1\s/m);
      expect(text.stdout).toMatch(/1 mismatch: the chain disagrees with the ledger/);
    } finally {
      edit(amount);
    }
    const { code, report } = await reconcile("--all", "--check");
    expect(code).toBe(0);
    expect(report.outcomes.mismatch!.count).toBe(0);
  });

  it("runs in the app's background every RECONCILE_INTERVAL_SECONDS", async () => {
    proxy.setMode({ kind: "drop" });
    const reconciling = await startExtraApp({
      FACILITATOR_URL: proxy.url,
      FACILITATOR_TIMEOUT_MS: "1500",
      RECONCILE_INTERVAL_SECONDS: "1",
    });
    try {
      const before = await usdcBalance(payer().address);
      const paymentRequired = await quote(PATH, chatBody("background"), reconciling.url);
      const signature = await officialPayment(payer().privateKey, paymentRequired);
      const headers = { "PAYMENT-SIGNATURE": signature };
      const response = await postJson(PATH, chatBody("background"), headers, reconciling.url);
      expect(response.status).toBe(200);
      expect(ledgerRow(signature)).toMatchObject({ status: "settle_unknown" });
      // The facilitator is reachable again: the app's next pass settles the delivered payment.
      proxy.setMode({ kind: "forward" });
      const row = await rowWithStatus(signature, "settled", 20_000);
      expect(row.transaction).toMatch(/^0x[0-9a-f]{64}$/);
      const amount = BigInt(paymentRequired.accepts[0]!.amount);
      expect(await usdcBalance(payer().address)).toBe(before - amount);
    } finally {
      await reconciling.stop();
    }
  });

  it("refuses bad configuration with exit 2", async () => {
    const { code, stderr } = await paysvc(["ledger", "reconcile"], 60_000, {
      NETWORK: "eip155:137",
      CHAIN_RPC_URL: stack().chainRpcUrl,
      FACILITATOR_URL: "",
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/FACILITATOR_URL: required with CHAIN_RPC_URL/);
  });
});
