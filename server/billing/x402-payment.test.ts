import { mkdtempSync, rmSync } from "node:fs";
import { DeferredWrites } from "../lifecycle/deferred-writes";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import Database from "better-sqlite3";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { FacilitatorClient } from "@x402/core/server";
import type { SettleResponse, VerifyResponse } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { appendPaymentIdentifierToExtensions } from "@x402/extensions/payment-identifier";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { isApiError } from "../core/errors";
import { ServiceMetrics } from "../metrics/service-metrics";
import type { PayerFundsSource } from "../payment/payer-funds";
import { LocalSignatureCheck } from "../payment/local-signature";
import { PaymentGateway } from "../payment/payment-gateway";
import { openSqliteStorage } from "../storage/sqlite/sqlite-storage";
import { UpstreamError } from "../upstream/upstream-error";
import { eventStreamOf } from "./__fixtures__/events";
import { readChunks } from "./__fixtures__/read-chunks";
import type { BillableCall, PreparedAnswer } from "./payment-method";
import { PaidRetries } from "./paid-retries";
import { PaymentMethods } from "./payment-methods";
import type { PaidEndpoint } from "../context/endpoint";
import { X402Payment } from "./x402-payment";

const network = getNetwork("eip155:137");
const PAY_TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
// The public test mnemonic's account 2: a key anyone may use in tests.
const payer = privateKeyToAccount("0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a");

/** A facilitator that says what it is told to, and counts what it was asked. */
class FakeFacilitator implements FacilitatorClient {
  verdict: VerifyResponse = { isValid: true, payer: payer.address };
  settlement: SettleResponse | Error = { success: true, transaction: `0x${"ab".repeat(32)}`, network: network.id };
  verified = 0;
  settled = 0;
  async getSupported() {
    return { kinds: [{ x402Version: 2, scheme: "exact", network: network.id }], extensions: [], signers: {} };
  }
  async verify() {
    this.verified++;
    return this.verdict;
  }
  async settle() {
    this.settled++;
    if (this.settlement instanceof Error) throw this.settlement;
    return this.settlement;
  }
}

/** The chain's word on every payer here: far more than any call costs (the exposure bound is e2e's to test). */
const wellFunded: PayerFundsSource = { read: async () => ({ balance: 10n ** 15n, permit2Allowance: 10n ** 15n }) };

describe("x402 billing, against a fake facilitator and a real SQLite ledger", () => {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-x402-"));
  const storage = openSqliteStorage(join(directory, "ledger.sqlite"));
  const { ledger } = storage;
  let facilitator: FakeFacilitator;
  let payment: X402Payment;
  let gateway: PaymentGateway;
  let metrics: ServiceMetrics;
  beforeEach(() => {
    facilitator = new FakeFacilitator();
    gateway = new PaymentGateway({
      network,
      payTo: PAY_TO,
      facilitators: [{ name: "test", client: facilitator }],
      facilitatorTimeoutMs: 1000,
      paymentTimeoutSeconds: 300,
    });
    metrics = new ServiceMetrics(network.id);
    payment = new X402Payment({
      gateway,
      ledger,
      metrics,
      retries: new PaidRetries(storage.paidAnswers, 3_600_000),
      keep: (work) => work,
      writes: new DeferredWrites((work) => work),
      signatures: new LocalSignatureCheck(network, "http://chain.invalid"),
      funds: wellFunded,
      payerHolds: storage.payerHolds,
    });
  });
  afterAll(async () => {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const call = (signature?: string, body = '{"n":1}'): BillableCall => ({
    request: {
      method: "POST",
      url: "http://127.0.0.1:3000/v1/chat/completions",
      headers: { get: (name) => (name === "payment-signature" ? (signature ?? null) : null) },
      body: null,
    },
    body: { value: JSON.parse(body), sha256: body },
    resourceUrl: "http://service.test/v1/chat/completions",
    endpoint: "/v1/chat/completions",
    quote: { amount: 1234n, display: { amount: "1234" }, description: "Chat", model: "vendor-a/gpt-6-luna" },
    quoteMs: 0.5,
  });

  /** The 402 of an unpaid call, then the official client's signature for it (under a payment-identifier if given). */
  async function signedCall(id?: string): Promise<{ signature: string; nonce: string }> {
    const challenge = await authorize(call());
    if (challenge.kind !== "answer") throw new Error("expected a 402");
    const required = decodePaymentRequiredHeader(challenge.answer.headers["payment-required"]!);
    const client = new x402Client();
    const publicClient = createPublicClient({ transport: http("http://chain.invalid") });
    registerExactEvmScheme(client, { signer: toClientEvmSigner(payer, publicClient) });
    const payload = await client.createPaymentPayload(required);
    if (id) appendPaymentIdentifierToExtensions(payload.extensions!, id);
    const nonce = (payload.payload as { authorization: { nonce: string } }).authorization.nonce;
    return { signature: encodePaymentSignatureHeader(payload), nonce };
  }

  /** The call authorized as billing does: by the registry, x402 its one method (the one given, else `payment`). */
  function authorize(billable: BillableCall, method: X402Payment = payment) {
    const registry = new PaymentMethods(method).register(method);
    const endpoint = { access: ["x402"] } as unknown as PaidEndpoint;
    return registry.authorize(billable, registry.credentialOf(endpoint, billable.request));
  }

  const statusOf = async (nonce: string) => (await ledger.findByNonce(nonce))?.status;
  const json: PreparedAnswer = { kind: "json", body: { ok: true } };

  it("answers an unpaid call 402 with the exact amount, to the pay-to, and asks nothing of the facilitator", async () => {
    const result = await authorize(call());
    expect(result.kind).toBe("answer");
    if (result.kind !== "answer") return;
    expect(result.answer.status).toBe(402);
    const required = decodePaymentRequiredHeader(result.answer.headers["payment-required"]!);
    expect(required.accepts[0]).toMatchObject({ amount: "1234", payTo: PAY_TO, network: network.id });
    expect(required.extensions?.quote).toEqual({ amount: "1234" });
    expect(facilitator.verified + facilitator.settled).toBe(0);
  });

  it("verifies, lets the work run, settles once after it, and records the settlement", async () => {
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    if (result.kind !== "granted") throw new Error("expected a grant");
    expect(result.session.grant.payment?.nonce).toBe(nonce);
    expect(facilitator.verified).toBe(1);
    expect(facilitator.settled).toBe(0);
    expect(await statusOf(nonce)).toBe("verified");
    const finished = await result.session.finish(json);
    const answer = finished.answer;
    expect(finished.outcome).toBe("paid");
    expect(answer.status).toBe(200);
    expect(answer.headers["payment-response"]).toBeDefined();
    expect(facilitator.settled).toBe(1);
    answer.afterSent?.();
    expect(await statusOf(nonce)).toBe("settled");
  });

  it("refuses the same signature a second time before the facilitator is asked", async () => {
    const { signature } = await signedCall();
    expect((await authorize(call(signature))).kind).toBe("granted");
    const replay = await authorize(call(signature));
    expect(replay.kind).toBe("answer");
    if (replay.kind === "answer")
      expect(JSON.parse(replay.answer.body as string).error.code).toBe("payment_already_used");
    expect(facilitator.verified).toBe(1);
  });

  it("settles nothing when the work fails, and says the payment was not taken", async () => {
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    if (result.kind !== "granted") throw new Error("expected a grant");
    const error = await result.session
      .failed(new UpstreamError("status", "upstream answered 500", 500))
      .catch((thrown: unknown) => thrown);
    expect(isApiError(error) && error.status).toBe(502);
    expect(facilitator.settled).toBe(0);
    expect(await statusOf(nonce)).toBe("not_charged");
  });

  it("refuses a payment the facilitator rejects, and never settles it", async () => {
    facilitator.verdict = { isValid: false, invalidReason: "insufficient_funds", payer: payer.address };
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    expect(result.kind === "answer" && result.answer.status).toBe(402);
    expect(await statusOf(nonce)).toBe("failed");
    expect(facilitator.settled).toBe(0);
  });

  it("drops the work's answer and undoes it when settlement is refused", async () => {
    facilitator.settlement = {
      success: false,
      errorReason: "invalid_transaction_state",
      network: network.id,
      transaction: "",
    };
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    if (result.kind !== "granted") throw new Error("expected a grant");
    let undone = 0;
    const finished = await result.session.finish({ ...json, onUnsettled: () => void undone++ });
    const answer = finished.answer;
    expect(finished.outcome).toBe("refused");
    expect(answer.status).toBe(402);
    expect(JSON.parse(answer.body as string).error.code).toBe("settlement_failed");
    // The 402 offers the same terms as every other, the payment-identifier declaration included.
    const required = decodePaymentRequiredHeader(answer.headers["payment-required"]!);
    expect(required.extensions?.["payment-identifier"]).toMatchObject({ info: { required: false } });
    expect(undone).toBe(1);
    expect(await statusOf(nonce)).toBe("failed");
  });

  it("delivers the work when the settlement's outcome is unknown, and keeps the row for reconciliation", async () => {
    facilitator.settlement = new Error("socket hang up");
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    if (result.kind !== "granted") throw new Error("expected a grant");
    const finished = await result.session.finish(json);
    const answer = finished.answer;
    expect(finished.outcome).toBe("settle_unknown");
    expect(answer.status).toBe(200);
    expect(answer.headers["payment-response"]).toBeUndefined();
    expect(await statusOf(nonce)).toBe("settle_unknown");
    const failures = await metrics.registry.getSingleMetric("paysvc_facilitator_errors_total")!.get();
    expect(failures.values).toEqual([{ labels: { operation: "settle" }, value: 1 }]);
  });

  it("delivers the work when the transfer is still pending, and keeps its hash for reconciliation", async () => {
    const pending = `0x${"cd".repeat(32)}`;
    facilitator.settlement = {
      success: false,
      errorReason: "settlement_pending",
      transaction: pending,
      network: network.id,
    };
    const { signature, nonce } = await signedCall();
    const result = await authorize(call(signature));
    if (result.kind !== "granted") throw new Error("expected a grant");
    let undone = 0;
    const finished = await result.session.finish({ ...json, onUnsettled: () => void undone++ });
    expect(finished.outcome).toBe("settle_unknown");
    expect(finished.answer.status).toBe(200);
    expect(undone).toBe(0);
    // The x402 server asks once more before it gives up on a pending settlement.
    expect(facilitator.settled).toBe(2);
    expect(await ledger.findByNonce(nonce)).toMatchObject({
      status: "settle_unknown",
      failureReason: "settlement_pending",
      transaction: pending,
    });
  });

  const errorCode = (result: Awaited<ReturnType<X402Payment["authorize"]>>) =>
    result.kind === "answer"
      ? (JSON.parse(result.answer.body as string) as { error: { code: string } }).error.code
      : "";

  it("holds a payment-identifier while its request runs: a retry signed anew meanwhile is charged nothing", async () => {
    const id = `held-${Date.now()}-while-it-runs`;
    const first = await signedCall(id);
    const running = await authorize(call(first.signature));
    if (running.kind !== "granted") throw new Error("expected a grant");
    // The connection dropped; the client signs a new payment under the same id while the first is answered.
    const second = await signedCall(id);
    const meanwhile = await authorize(call(second.signature));
    expect(meanwhile.kind === "answer" && meanwhile.answer.status).toBe(409);
    expect(errorCode(meanwhile)).toBe("payment_identifier_busy");
    expect(await statusOf(second.nonce)).toBeUndefined();
    // Another request under the same id is a conflict, held or kept.
    const other = await authorize(call((await signedCall(id)).signature, '{"n":2}'));
    expect(errorCode(other)).toBe("payment_identifier_conflict");
    expect(facilitator.verified).toBe(1);
    await running.session.finish(json);
    // Once answered, the same retry gets the kept answer, and only the first payment is settled.
    const after = await authorize(call(second.signature));
    expect(after.kind === "answer" && after.outcome).toBe("replayed");
    expect(facilitator.settled).toBe(1);
    expect(await statusOf(second.nonce)).toBeUndefined();
  });

  it("lets go of a payment-identifier whose request failed or was refused: a retry then pays and runs", async () => {
    const id = `held-${Date.now()}-then-failed`;
    const first = await signedCall(id);
    const failing = await authorize(call(first.signature));
    if (failing.kind !== "granted") throw new Error("expected a grant");
    await failing.session.failed(new UpstreamError("status", "upstream answered 500", 500)).catch(() => undefined);
    facilitator.verdict = { isValid: false, invalidReason: "insufficient_funds", payer: payer.address };
    const rejected = await authorize(call((await signedCall(id)).signature));
    expect(errorCode(rejected)).toBe("payment_rejected");
    facilitator.verdict = { isValid: true, payer: payer.address };
    const retry = await signedCall(id);
    const granted = await authorize(call(retry.signature));
    expect(granted.kind).toBe("granted");
    if (granted.kind !== "granted") return;
    const finished = await granted.session.finish(json);
    expect(finished.outcome).toBe("paid");
    finished.answer.afterSent?.();
    await expect.poll(() => statusOf(retry.nonce)).toBe("settled");
  });

  it("lets go of a payment-identifier whose answer could not be kept: the retry pays again, never waits", async () => {
    const schema = new Database(join(directory, "ledger.sqlite"));
    schema.exec(`create trigger refuse_kept_answer before update of answer on paid_answers
      begin select raise(abort, 'the disk is full'); end`);
    try {
      const id = `unkept-${Date.now()}-answer`;
      const granted = await authorize(call((await signedCall(id)).signature));
      if (granted.kind !== "granted") throw new Error("expected a grant");
      expect((await granted.session.finish(json)).outcome).toBe("paid");
      const retry = await authorize(call((await signedCall(id)).signature));
      expect(retry.kind).toBe("granted");
    } finally {
      schema.exec("drop trigger refuse_kept_answer");
      schema.close();
    }
  });

  it("replays a kept answer for its own payment only: a copy with another signature is judged, not replayed", async () => {
    const id = `kept-${Date.now()}-forged-copy`;
    const { signature } = await signedCall(id);
    const granted = await authorize(call(signature));
    if (granted.kind !== "granted") throw new Error("expected a grant");
    await granted.session.finish(json);
    const payload = JSON.parse(Buffer.from(signature, "base64").toString("utf8")) as {
      payload: { signature: string };
    };
    // Another signature of the same payment: 65 bytes, recovering to someone else. The chain cannot be asked here
    // whether the payer is a contract wallet that vouches for it: refused as unavailable, and nobody else is asked.
    payload.payload.signature = `0x${"11".repeat(64)}1b`;
    const forged = await authorize(call(Buffer.from(JSON.stringify(payload)).toString("base64"))).catch(
      (error: unknown) => error,
    );
    expect(forged).toMatchObject({ code: "service_unavailable", status: 503 });
    expect(facilitator.verified).toBe(1);
    // The payment itself again, byte for byte as its ledger row keeps it: the facilitator is not asked.
    const replayed = await authorize(call(signature));
    expect(replayed.kind === "answer" && replayed.outcome).toBe("replayed");
    expect(facilitator.verified).toBe(1);
    expect(facilitator.settled).toBe(1);
  });

  it("passes an overlapped stream on to its end when its settlement's outcome is unknown and cannot be recorded", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => void unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    // The ledger cannot take the row's new status (a database gone read-only, say): a real failure of SQLite's.
    const schema = new Database(join(directory, "ledger.sqlite"));
    schema.exec(`create trigger refuse_settle_unknown before update of status on payments
      when new.status = 'settle_unknown' begin select raise(abort, 'the ledger is read-only'); end`);
    try {
      facilitator.settlement = new Error("socket hang up");
      const overlapping = new X402Payment({
        gateway,
        ledger,
        metrics,
        retries: new PaidRetries(storage.paidAnswers, 3_600_000),
        keep: (work) => work,
        writes: new DeferredWrites((work) => work),
        signatures: new LocalSignatureCheck(network, "http://chain.invalid"),
        funds: wellFunded,
        payerHolds: storage.payerHolds,
        settlement: { order: "overlap", strictAfterUnpaidMs: 60_000 },
      });
      const { signature, nonce } = await signedCall();
      const result = await authorize({ ...call(signature), overlapsVerify: true }, overlapping);
      if (result.kind !== "granted") throw new Error("expected a grant");
      const chunks = readChunks("chat-with-usage");
      const stream: PreparedAnswer = {
        kind: "stream",
        stream: { body: eventStreamOf(chunks), cancel: async () => {} },
      };
      const finished = await result.session.finish(stream);
      const text = await new Response(finished.answer.body as ReadableStream<Uint8Array>).text();
      expect(text).toMatch(/data: \[DONE\]\n\n$/);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(unhandled).toEqual([]);
      // The row stays verified, which reconciliation reads as well.
      expect(await statusOf(nonce)).toBe("verified");
    } finally {
      schema.exec("drop trigger refuse_settle_unknown");
      schema.close();
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("refuses a signature made for another amount", async () => {
    const { signature } = await signedCall();
    const other = {
      ...call(signature),
      quote: { amount: 9999n, display: {}, description: "Chat", model: "vendor-a/gpt-6-luna" },
    };
    const result = await authorize(other);
    expect(result.kind === "answer" && JSON.parse(result.answer.body as string).error.code).toBe("payment_mismatch");
    expect(facilitator.verified).toBe(0);
  });
});
