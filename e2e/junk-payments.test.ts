import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import Database from "better-sqlite3";
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { balances, chatBody, craftedPayment, postJson, quote, stack } from "./support/payments";
import { startOwnFacilitator } from "./support/own-facilitator";

const PATH = "/v1/chat/completions";
const JUNK = 1000;
const payer = () => stack().payers[2]!;
const thief = () => privateKeyToAccount(generatePrivateKey()).address;

/** Every row of the payments ledger, read from the service's SQLite file. */
function ledgerRows(): number {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return (database.prepare("select count(*) as count from payments").get() as { count: number }).count;
  } finally {
    database.close();
  }
}

/** One junk payment of each kind, in turn: unreadable, or signed by a key not the payer's, or for other terms. */
function junkMakers(required: PaymentRequired) {
  const ours = required.accepts[0] as PaymentRequirements;
  const payerAccount = privateKeyToAccount(payer().privateKey);
  const forger = () => privateKeyToAccount(generatePrivateKey());
  const json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64");
  /** A payment of ours whose signature is replaced by `signature`. */
  const resigned = async (signature: string) => {
    const header = await craftedPayment({ signer: payerAccount, paymentRequired: required });
    const payload = JSON.parse(Buffer.from(header, "base64").toString("utf8"));
    payload.payload.signature = signature;
    return json(payload);
  };
  return [
    // Unparseable.
    async () => randomBytes(48).toString("hex") + "!",
    async () => Buffer.from(`{"x402Version": 2, ${randomBytes(8).toString("hex")}`).toString("base64"),
    async () => json({ x402Version: 2, accepted: ours, payload: { signature: "0x00" } }),
    // A signature that is not bytes, or not 65 bytes from a payer that has no code: nothing to recover.
    async () => resigned("0xabc"),
    async () => resigned(`0x${randomBytes(200).toString("hex")}`),
    async () => resigned(`0x${randomBytes(65).toString("hex")}`),
    // Signed by a key that is not the payer's.
    async () =>
      craftedPayment({ signer: forger(), paymentRequired: required, authorization: { from: payerAccount.address } }),
    // The payer's own signature, for another pay-to (named in the terms, or only in what was signed), asset, network.
    async () =>
      craftedPayment({ signer: payerAccount, paymentRequired: required, requirements: { ...ours, payTo: thief() } }),
    async () => craftedPayment({ signer: payerAccount, paymentRequired: required, authorization: { to: thief() } }),
    async () =>
      craftedPayment({
        signer: payerAccount,
        paymentRequired: required,
        requirements: { ...ours, asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" },
      }),
    async () =>
      craftedPayment({
        signer: payerAccount,
        paymentRequired: required,
        requirements: { ...ours, network: "eip155:8453" },
        chainId: 8453,
      }),
    // The right terms, signed on another chain's domain (the token's EIP-712 domain names the chain).
    async () => craftedPayment({ signer: payerAccount, paymentRequired: required, chainId: 8453 }),
  ];
}

describe("junk payments cost us nothing", () => {
  let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  beforeAll(async () => {
    // The stack's own facilitator behind a proxy that counts each call: the app's every verify and settle.
    proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    app = await startExtraApp({ FACILITATOR_URL: proxy.url });
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.stop();
  });

  /** The facilitator's breaker, as /health shows it. */
  const facilitatorHealth = async () => {
    const { status, breaker, consecutive_failures } = (await (await fetch(`${app.url}/health`)).json()).checks
      .facilitators.facilitator;
    return { status, breaker, consecutive_failures };
  };

  it(`${JUNK} payments with unparseable or foreign signatures: no ledger row, no facilitator call, no breaker change`, async () => {
    const body = chatBody("junk");
    const required = await quote(PATH, body, app.url);
    const makers = junkMakers(required);
    const rowsBefore = ledgerRows();
    const healthBefore = await facilitatorHealth();
    const balancesBefore = await balances(payer().address);
    const calls = { ...proxy.received };
    const codes: Record<string, number> = {};
    for (let start = 0; start < JUNK; start += 25) {
      const batch = Array.from({ length: Math.min(25, JUNK - start) }, (_, offset) =>
        makers[(start + offset) % makers.length]!(),
      );
      const answers = await Promise.all(
        (await Promise.all(batch)).map(async (signature) => {
          const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, app.url);
          return { status: response.status, json: await response.json() };
        }),
      );
      for (const { status, json } of answers) {
        expect(status, JSON.stringify(json)).toBe(402);
        codes[json.error.code] = (codes[json.error.code] ?? 0) + 1;
      }
    }
    // Each was refused as what it is, before any work.
    expect(Object.keys(codes).sort()).toEqual(["payment_invalid", "payment_mismatch", "payment_rejected"]);
    expect(Object.values(codes).reduce((sum, count) => sum + count, 0)).toBe(JUNK);
    expect(ledgerRows()).toBe(rowsBefore);
    expect(proxy.received).toEqual(calls);
    expect(proxy.received).toEqual({ verify: 0, settle: 0 });
    expect(await facilitatorHealth()).toEqual(healthBefore);
    expect(healthBefore).toEqual({ status: "up", breaker: "closed", consecutive_failures: 0 });
    expect(await balances(payer().address)).toEqual(balancesBefore);
  });

  it("still takes a good payment through the same facilitator (the proxy counts it)", async () => {
    const body = chatBody("junk, then a good one");
    const required = await quote(PATH, body, app.url);
    const signature = await craftedPayment({
      signer: privateKeyToAccount(payer().privateKey),
      paymentRequired: required,
    });
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, app.url);
    expect(response.status, await response.clone().text()).toBe(200);
    await response.json();
    expect(proxy.received).toEqual({ verify: 1, settle: 1 });
  });
});

describe("a built-in facilitator serves its own app only", () => {
  // As `paysvc start` runs it: its app's secret, and only payments to its app's PAY_TO (the shared stack's).
  let builtIn: Awaited<ReturnType<typeof startOwnFacilitator>>;
  beforeAll(async () => {
    builtIn = await startOwnFacilitator(stack().payTo);
  });
  afterAll(() => builtIn?.stop());
  const facilitator = () => builtIn.url;
  const secret = () => ({ [builtIn.auth.name]: builtIn.auth.value });
  /** A payment the official client signs for `requirements`, and the facilitator's answer to `operation` of it. */
  async function ask(
    operation: "verify" | "settle",
    requirements: PaymentRequirements,
    headers: Record<string, string>,
  ) {
    const client = new x402Client();
    const account = privateKeyToAccount(payer().privateKey);
    registerExactEvmScheme(client, {
      signer: toClientEvmSigner(account, createPublicClient({ transport: http(stack().chainRpcUrl) })),
    });
    const required = await quote(PATH, chatBody("facilitator access"));
    const paymentPayload = await client.createPaymentPayload({ ...required, accepts: [requirements] });
    const response = await fetch(`${facilitator()}/${operation}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify({ x402Version: 2, paymentPayload, paymentRequirements: requirements }),
    });
    return { status: response.status, json: (await response.json()) as Record<string, unknown> };
  }

  it("refuses a request without the app's secret, or with another (401)", async () => {
    expect((await fetch(`${facilitator()}/supported`)).status).toBe(401);
    const wrong = { authorization: `Bearer ${randomBytes(32).toString("hex")}` };
    expect((await fetch(`${facilitator()}/supported`, { headers: wrong })).status).toBe(401);
    const requirements = (await quote(PATH, chatBody("no secret"))).accepts[0] as PaymentRequirements;
    expect((await ask("verify", requirements, {})).status).toBe(401);
    expect((await ask("settle", requirements, wrong)).status).toBe(401);
    expect((await fetch(`${facilitator()}/supported`, { headers: secret() })).status).toBe(200);
  });

  it("refuses a payment whose payTo is not PAY_TO (403), and verifies one that is", async () => {
    const before = await balances(payer().address);
    const ours = (await quote(PATH, chatBody("pay-to"))).accepts[0] as PaymentRequirements;
    const elsewhere = { ...ours, payTo: thief() };
    expect(await ask("verify", elsewhere, secret())).toEqual({
      status: 403,
      json: expect.objectContaining({ isValid: false, invalidReason: "pay_to_not_served" }),
    });
    expect(await ask("settle", elsewhere, secret())).toEqual({
      status: 403,
      json: expect.objectContaining({ success: false, errorReason: "pay_to_not_served" }),
    });
    expect(await ask("verify", ours, secret())).toEqual({
      status: 200,
      json: expect.objectContaining({ isValid: true }),
    });
    expect(await balances(payer().address)).toEqual(before);
  });
});
