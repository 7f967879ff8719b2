import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createWalletClient, defineChain, http } from "viem";
import { wrapFetchWithPayment } from "x402-fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { startExtraApp } from "./support/extra-app";
import { paysvc } from "./support/run-paysvc";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { fundedPayer } from "./support/funded-payer";
import {
  balances,
  chatBody,
  craftedPayment,
  ledgerRow,
  officialPayment,
  paymentClient,
  polygon,
  postJson,
  quote,
  stack,
} from "./support/payments";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[6]!;
/** A real network's facilitator: verify takes a few hundred ms, a settlement waits for its confirmation. */
const VERIFY_MS = 300;
const SETTLE_MS = 2500;
const METRICS_TOKEN = "settlement-order-metrics-token";

let upstream: LocalUpstream;
let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;
let overlap: Awaited<ReturnType<typeof startExtraApp>>;
let strict: Awaited<ReturnType<typeof startExtraApp>>;

beforeAll(async () => {
  // A provider of this file's own (the calls it saw, and whether they were cancelled), streaming at a model's pace.
  upstream = await startLocalUpstream({ port: 0, faultDirectives: true, deltaDelayMs: 40, streamDeltas: 12 });
  proxy = await startFacilitatorProxy(stack().facilitatorUrl);
  const env = {
    FACILITATOR_URL: proxy.url,
    FACILITATOR_TIMEOUT_MS: "15000",
    UPSTREAM_BASE_URL: `${upstream.url}/v1`,
    METRICS_TOKEN,
  };
  [overlap, strict] = await Promise.all([startExtraApp(env), startExtraApp({ ...env, SETTLEMENT_ORDER: "strict" })]);
});
afterAll(async () => {
  await Promise.all([overlap?.stop(), strict?.stop()]);
  await proxy?.stop();
  await upstream?.stop();
});

const slowChain = () => proxy.setDelays({ verifyMs: VERIFY_MS, settleMs: SETTLE_MS });
const quickChain = () => proxy.setDelays({ verifyMs: 0, settleMs: 0 });

/** A paid request, timed: when its headers came, when its first body bytes came, and the whole text. */
async function timedPost(base: string, body: unknown, signature: string) {
  const sent = performance.now();
  const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, base);
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  const first = await reader.read();
  const firstByteMs = performance.now() - sent;
  let text = first.value ? decoder.decode(first.value, { stream: true }) : "";
  for (let next = await reader.read(); !next.done; next = await reader.read()) {
    text += decoder.decode(next.value, { stream: true });
  }
  return { response, firstByteMs, totalMs: performance.now() - sent, text };
}

/** Waits until `check` holds, for at most `withinMs`. */
async function eventually(check: () => boolean, withinMs = 10_000): Promise<void> {
  for (const deadline = Date.now() + withinMs; !check();) {
    if (Date.now() > deadline) throw new Error("the condition did not hold in time");
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("SETTLEMENT_ORDER on a slow chain (verify 300 ms, settle 2.5 s)", () => {
  beforeAll(slowChain);
  afterAll(quickChain);

  it("overlap: a paid stream's first event comes before the settlement, and the payer pays the quote once", async () => {
    const body = chatBody("overlap stream", { stream: true });
    const required = await quote(PATH, body, overlap.url);
    const signature = await officialPayment(payer().privateKey, required);
    const before = await balances(payer().address);
    const { response, firstByteMs, text } = await timedPost(overlap.url, body, signature);
    expect(response.status).toBe(200);
    expect(firstByteMs).toBeLessThan(SETTLE_MS);
    expect(response.headers.get("payment-response")).toBeNull();
    expect(text).toContain("data: [DONE]");
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(BigInt(required.accepts[0]!.amount));
    expect(ledgerRow(signature)).toMatchObject({ status: "settled", settled_amount: required.accepts[0]!.amount });
  });

  it("strict: the same stream's first byte waits for verify and the settlement", async () => {
    const body = chatBody("strict stream", { stream: true });
    const required = await quote(PATH, body, strict.url);
    const signature = await officialPayment(payer().privateKey, required);
    const before = await balances(payer().address);
    const { response, firstByteMs, text } = await timedPost(strict.url, body, signature);
    expect(response.status).toBe(200);
    expect(firstByteMs).toBeGreaterThanOrEqual(VERIFY_MS + SETTLE_MS);
    expect(response.headers.get("payment-response")).toBeTruthy();
    expect(text).toContain("data: [DONE]");
    expect(before.payer - (await balances(payer().address)).payer).toBe(BigInt(required.accepts[0]!.amount));
  });

  it("overlap: a whole answer is still sent only once settled", async () => {
    const body = chatBody("overlap whole answer");
    const required = await quote(PATH, body, overlap.url);
    const signature = await officialPayment(payer().privateKey, required);
    const { response, totalMs } = await timedPost(overlap.url, body, signature);
    expect(response.status).toBe(200);
    expect(totalMs).toBeGreaterThanOrEqual(SETTLE_MS);
    expect(response.headers.get("payment-response")).toBeTruthy();
    // The answer leaves once settled; the ledger records the settlement right after it (x402-session.ts).
    await expect.poll(() => ledgerRow(signature)?.status).toBe("settled");
  });
});

describe("a payment the facilitator rejects while the upstream works (overlap)", () => {
  beforeAll(slowChain);
  afterAll(quickChain);

  /** The upstream is asked, hangs, and is cancelled once the verdict is in: the caller gets only the 402. */
  async function rejectedWhileWorking(body: Record<string, unknown>, signature: string) {
    const asked = upstream.chatRequestsReceived.length;
    const payTo = (await balances(payer().address)).payTo;
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, overlap.url);
    expect(response.status).toBe(402);
    const answer = (await response.json()) as { error: { code: string } };
    expect(answer.error.code).toBe("payment_rejected");
    expect(upstream.chatRequestsReceived.length).toBe(asked + 1);
    await eventually(() => upstream.chatRequestsReceived[asked]!.cancelled);
    expect(ledgerRow(signature)).toMatchObject({ status: "failed" });
    expect((await balances(payer().address)).payTo).toBe(payTo);
  }

  it("a payer without funds: the upstream call is aborted, nothing charged", async () => {
    const body = chatBody("[paysvc-dev-fault:hang] nothing to pay with");
    const required = await quote(PATH, body, overlap.url);
    await rejectedWhileWorking(body, await officialPayment(generatePrivateKey(), required));
  });

  it("an expired authorization, streamed: the upstream call is aborted, nothing charged", async () => {
    const body = chatBody("[paysvc-dev-fault:hang] expired", { stream: true });
    const required = await quote(PATH, body, overlap.url);
    const past = String(Math.floor(Date.now() / 1000) - 60);
    const signer = privateKeyToAccount(payer().privateKey);
    const signature = await craftedPayment({
      signer,
      paymentRequired: required,
      authorization: { validAfter: String(Number(past) - 600), validBefore: past },
    });
    await rejectedWhileWorking(body, signature);
  });

  it("a forged signature is refused before any upstream call or facilitator request", async () => {
    const body = chatBody("forged");
    const required = await quote(PATH, body, overlap.url);
    const forger = privateKeyToAccount(generatePrivateKey());
    const signature = await craftedPayment({
      signer: forger,
      paymentRequired: required,
      authorization: { from: payer().address },
    });
    const asked = upstream.chatRequestsReceived.length;
    const { verify, settle } = proxy.received;
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, overlap.url);
    expect(response.status).toBe(402);
    expect(((await response.json()) as { error: { code: string; message: string } }).error).toMatchObject({
      code: "payment_rejected",
      message: expect.stringContaining("signature is not the payer's"),
    });
    expect(upstream.chatRequestsReceived.length).toBe(asked);
    expect(proxy.received).toEqual({ verify, settle });
    expect(ledgerRow(signature)).toBeUndefined();
  });
});

describe("a settlement refused while its stream is passed on (overlap)", () => {
  it("ends the stream with an error event, records what was delivered unpaid, and serves the payer strictly after", async () => {
    const body = chatBody("my funds leave mid-stream", { stream: true, max_tokens: 200 });
    const required = await quote(PATH, body, overlap.url);
    const price = BigInt(required.accepts[0]!.amount);
    const owner = await fundedPayer(price);
    const signature = await officialPayment(owner.key, required);
    proxy.setMode({ kind: "gate" });
    try {
      const streamed = timedPost(overlap.url, body, signature);
      await proxy.settleAtGate(owner.address);
      await owner.drain();
      proxy.openGate();
      const { response, text } = await streamed;
      expect(response.status).toBe(200);
      expect(text).toContain('"code":"settlement_failed"');
      expect(text).not.toContain("[DONE]");
    } finally {
      proxy.setMode({ kind: "forward" });
    }
    const row = ledgerRow(signature)!;
    expect(row).toMatchObject({ status: "unpaid", settled_amount: null });
    const unpaid = BigInt(row.unpaid_amount as string);
    expect(unpaid).toBeGreaterThan(0n);
    expect(unpaid).toBeLessThanOrEqual(price);
    const metrics = await (
      await fetch(`${overlap.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    expect(metrics).toMatch(/paysvc_unpaid_atomic_total\{[^}]*endpoint="\/v1\/chat\/completions"[^}]*\} [1-9]/);
    // The operator's report lists the payer and what it owes.
    const reported = await paysvc(["ledger", "report", "--json"], 60_000, {
      NETWORK: "eip155:137",
      DATABASE_URL: `file:${stack().databasePath}`,
    });
    expect(reported.code).toBe(0);
    const { unpaidPayers } = JSON.parse(reported.stdout) as { unpaidPayers: { payer: string; amountAtomic: string }[] };
    expect(unpaidPayers).toContainEqual(
      expect.objectContaining({ payer: owner.address.toLowerCase(), count: 1, amountAtomic: unpaid.toString() }),
    );

    // Its next stream, with the funds back, waits for its settlement before the first byte.
    await owner.refund();
    slowChain();
    try {
      const next = chatBody("served strictly now", { stream: true });
      const again = await officialPayment(owner.key, await quote(PATH, next, overlap.url));
      const { response, firstByteMs } = await timedPost(overlap.url, next, again);
      expect(response.status).toBe(200);
      expect(firstByteMs).toBeGreaterThanOrEqual(SETTLE_MS);
      expect(response.headers.get("payment-response")).toBeTruthy();
    } finally {
      quickChain();
    }
    // Another instance over the same ledger serves it settled-first too: its stream's headers carry the settlement.
    await owner.refund();
    const elsewhere = chatBody("served strictly elsewhere", { stream: true });
    const paid = await officialPayment(owner.key, await quote(PATH, elsewhere));
    const { response } = await timedPost(stack().appUrl, elsewhere, paid);
    expect(response.status).toBe(200);
    expect(response.headers.get("payment-response")).toBeTruthy();
  });
});

describe.each([
  ["overlap", () => overlap],
  ["strict", () => strict],
])("guarantees kept in %s order", (_order, app) => {
  it("a replayed payment signature is refused and charged once", async () => {
    const body = chatBody("replay me", { stream: true });
    const required = await quote(PATH, body, app().url);
    const signature = await officialPayment(payer().privateKey, required);
    const before = await balances(payer().address);
    expect((await timedPost(app().url, body, signature)).response.status).toBe(200);
    const replayed = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, app().url);
    expect(replayed.status).toBe(402);
    expect(((await replayed.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    expect(before.payer - (await balances(payer().address)).payer).toBe(BigInt(required.accepts[0]!.amount));
  });

  it("a payment-identifier retry gets the first answer, charged once", async () => {
    const body = chatBody("retry me");
    const required: PaymentRequired = await quote(PATH, body, app().url);
    const id = generatePaymentId();
    const signed = async () => {
      const payload = await paymentClient(payer().privateKey).createPaymentPayload(structuredClone(required));
      appendPaymentIdentifierToExtensions(payload.extensions!, id);
      return encodePaymentSignatureHeader(payload);
    };
    const before = await balances(payer().address);
    const first = await timedPost(app().url, body, await signed());
    const retry = await timedPost(app().url, body, await signed());
    expect(first.response.status).toBe(200);
    expect(retry.response.headers.get("idempotent-replayed")).toBe("true");
    expect(retry.text).toBe(first.text);
    expect(before.payer - (await balances(payer().address)).payer).toBe(BigInt(required.accepts[0]!.amount));
  });

  it("an x402 v1 client (x402-fetch 1.x) pays once", async () => {
    const chain = defineChain({
      id: polygon.chainId,
      name: "Polygon (embedded)",
      nativeCurrency: { name: "POL", symbol: "POL", decimals: 18 },
      rpcUrls: { default: { http: [stack().chainRpcUrl] } },
    });
    const wallet = createWalletClient({ account: privateKeyToAccount(payer().privateKey), chain, transport: http() });
    const pay = wrapFetchWithPayment(fetch, wallet as never);
    const body = chatBody("a v1 payment");
    const price = BigInt((await quote(PATH, body, app().url)).accepts[0]!.amount);
    const before = await balances(payer().address);
    const response = await pay(`${app().url}${PATH}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("x-payment-response")).toBeTruthy();
    expect(before.payer - (await balances(payer().address)).payer).toBe(price);
  });
});
