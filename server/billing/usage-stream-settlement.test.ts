import { mkdtempSync, rmSync } from "node:fs";
import { DeferredWrites } from "../lifecycle/deferred-writes";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { FacilitatorClient } from "@x402/core/server";
import type { PaymentPayload, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { afterAll, describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { SseEvent, writeEventStream, type EventStream } from "../http/event-stream";
import { ServiceMetrics } from "../metrics/service-metrics";
import { PaymentGateway } from "../payment/payment-gateway";
import type { DecodedPayment } from "../payment/payment-signature";
import { openSqliteStorage } from "../storage/sqlite/sqlite-storage";
import { dataOfFixture } from "./__fixtures__/events";
import { chatUsageReader } from "./chat-stream-meter";
import { PaidRetries } from "./paid-retries";
import type { BillableCall } from "./payment-method";
import { SignedPayment } from "./schemes/signed-payment";
import { uptoScheme } from "./schemes/upto-scheme";
import { settledOnUsage, uptoDeadlineProblem } from "./usage-stream-settlement";

const network = getNetwork("eip155:137");

/** A facilitator that settles whatever it is asked, and records the amounts. */
class SettlingFacilitator implements FacilitatorClient {
  readonly amounts: string[] = [];
  async getSupported() {
    const kinds = ["exact", "upto"].map((scheme) => ({ x402Version: 2, scheme, network: network.id }));
    return { kinds, extensions: [], signers: {} };
  }
  async verify() {
    return { isValid: true, payer: "0xpayer" };
  }
  async settle(_payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    this.amounts.push(requirements.amount);
    return { success: true, transaction: `0x${"ab".repeat(32)}`, network: network.id };
  }
}

/** A generation that never ends by itself: a content delta every 10 ms; `cancelled` once it is abandoned. */
function endlessGeneration(): { body: EventStream; cancelled: Promise<void> } {
  let cancelled: () => void = () => undefined;
  const done = new Promise<void>((resolve) => (cancelled = resolve));
  const chunk = (delta: object) => SseEvent.of({ object: "chat.completion.chunk", choices: [{ index: 0, delta }] });
  let sent = 0;
  const body = new ReadableStream<SseEvent[]>({
    async pull(controller) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      controller.enqueue([chunk(sent++ === 0 ? { role: "assistant" } : { content: "word " })]);
    },
    cancel: () => cancelled(),
  });
  return { body, cancelled: done };
}

describe("an upto stream and its payment's deadline", () => {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-upto-deadline-"));
  const storage = openSqliteStorage(join(directory, "ledger.sqlite"));
  afterAll(async () => {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it("refuses before any work a payment whose deadline leaves less than a minute", () => {
    const now = 1_800_000_000_000;
    expect(uptoDeadlineProblem(now / 1000 + 59, now)).toMatch(/deadline is 59 s away.*at least 60 s/);
    expect(uptoDeadlineProblem(now / 1000 - 5, now)).toMatch(/deadline is 0 s away/);
    expect(uptoDeadlineProblem(now / 1000 + 60, now)).toBeUndefined();
    expect(uptoDeadlineProblem(undefined, now)).toBeUndefined();
  });

  /** A verified upto payment of its own nonce, its ledger row claimed, and what settling it needs. */
  async function uptoPayment(nonce: string) {
    const facilitator = new SettlingFacilitator();
    const gateway = new PaymentGateway({
      network,
      payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      facilitators: [{ name: "test", client: facilitator }],
      facilitatorTimeoutMs: 1000,
      paymentTimeoutSeconds: 300,
    });
    const services = {
      gateway,
      ledger: storage.ledger,
      metrics: new ServiceMetrics(network.id),
      retries: new PaidRetries(storage.paidAnswers, 60_000),
      keep: <T>(work: Promise<T>) => work,
      writes: new DeferredWrites(<T>(work: Promise<T>) => work),
    };
    const paymentId = (await storage.ledger.claim({
      nonce: nonce,
      payer: "0xpayer",
      amount: 1_000_000n,
      scheme: "upto",
      method: "x402",
      network: network.id,
      resource: "http://service.test/v1/chat/completions",
      endpoint: "/v1/chat/completions",
      model: "vendor-a/gpt-5.6-sol",
      bodyHash: "ab".repeat(32),
      paymentSignature: "signed",
      quoteMs: 1,
    }))!;
    const requirements = {
      scheme: "upto",
      network: network.id,
      amount: "1000000",
      asset: network.usdc.address,
      payTo: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      maxTimeoutSeconds: 300,
      extra: {},
    } as PaymentRequirements;
    const payload = { x402Version: 2, accepted: requirements, payload: {} } as unknown as PaymentPayload;
    const call = {
      request: new Request("http://paysvc.test/v1/chat/completions", { method: "POST" }),
      endpoint: "/v1/chat/completions",
      quote: { amount: 1_000_000n, model: "vendor-a/gpt-5.6-sol", tokens: { input: 10, maxOutput: 4000 } },
      usage: chatUsageReader,
    } as unknown as BillableCall;
    const verdict = Promise.resolve({ verifyMs: 1, facilitator: "test" });
    const payment = { nonce, payer: "0xpayer", version: 2, payload } as unknown as DecodedPayment;
    const terms = { payload, requirements };
    const signed = { services, call, scheme: uptoScheme, payment, paymentId, terms, verdict, overlapped: false };
    return { facilitator, services, call, signed };
  }

  /** The stream as `settledOnUsage` passes it on for a payment with this deadline (Unix seconds). */
  function settled(source: EventStream, payment: Awaited<ReturnType<typeof uptoPayment>>, deadline: number) {
    const { services, call, signed } = payment;
    const outcomes: string[] = [];
    const accepted = new SignedPayment({
      ...signed,
      payment: { ...signed.payment, deadline },
      identifier: undefined,
    });
    const body = settledOnUsage(source, {
      services,
      call,
      accepted,
      upstreamMs: 1,
      // 1,000 atomic units a token of output, plus 500 for the input.
      charge: (outputTokens) => 500n + 1_000n * BigInt(outputTokens ?? 4000),
      price: (amount) => ({ amount, network: network.id, decimals: network.usdc.decimals }),
      log: (outcome) => void outcomes.push(outcome),
    });
    return { body, text: () => new Response(writeEventStream(body)).text(), outcomes };
  }

  it("cuts a stream still running 30 s before the deadline, settles what it passed on, and says why", async () => {
    const payment = await uptoPayment("permit2:0xpayer:7");
    const { facilitator } = payment;
    const generation = endlessGeneration();
    const started = Date.now();
    // The deadline is 30.2 s away: the stream is cut in 200 ms.
    const { text: answered, outcomes } = settled(generation.body, payment, (started + 30_200) / 1000);
    const text = await answered();
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    await generation.cancelled;
    const events = text.split("\n\n").filter(Boolean);
    expect(events.at(-1)).toContain('"code":"payment_expired"');
    expect(text).not.toContain("[DONE]");
    // What passed on: the words before the cut, counted as the meter counts a stream cut short.
    const words = (text.match(/word /g) ?? []).length;
    expect(words).toBeGreaterThan(3);
    expect(facilitator.amounts).toHaveLength(1);
    const settledAmount = BigInt(facilitator.amounts[0]!);
    expect(settledAmount).toBeGreaterThan(500n);
    expect(settledAmount).toBeLessThan(500n + 1_000n * 4000n);
    expect(outcomes).toEqual(["settled"]);
    expect(await storage.ledger.findByNonce("permit2:0xpayer:7")).toMatchObject({
      status: "settled",
      settledAmount,
    });
  });

  it("settles at the deadline's margin while its caller has stopped reading, and abandons the upstream", async () => {
    const payment = await uptoPayment("permit2:0xpayer:9");
    const generation = endlessGeneration();
    const started = Date.now();
    const { body } = settled(generation.body, payment, (started + 30_200) / 1000);
    // The caller reads two batches, then nothing more: the settlement comes all the same.
    const reader = body.getReader();
    await reader.read();
    await reader.read();
    await generation.cancelled;
    expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    await expect.poll(() => payment.facilitator.amounts.length).toBe(1);
    expect(BigInt(payment.facilitator.amounts[0]!)).toBeLessThan(500n + 1_000n * 4000n);
    await expect
      .poll(async () => (await payment.services.ledger.findByNonce("permit2:0xpayer:9"))?.status)
      .toBe("settled");
    // Read again, the stream says why it ended.
    let last;
    for (let next = await reader.read(); !next.done; next = await reader.read()) last = next.value;
    expect(last?.at(-1)?.json()).toMatchObject({ error: { code: "payment_expired" } });
  });

  it("passes a stream whose deadline is further than a timer holds on to its end, settled on its usage", async () => {
    const payment = await uptoPayment("permit2:0xpayer:8");
    const events = dataOfFixture("chat-with-usage").map((data) => [new SseEvent(data)]);
    const source = new ReadableStream<SseEvent[]>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, 5));
        if (events.length) controller.enqueue(events.shift()!);
        else controller.close();
      },
    });
    // 2^40 s: a timer set for it would fire at once (setTimeout holds at most 2^31 - 1 ms).
    const { text, outcomes } = settled(source, payment, 2 ** 40);
    expect(await text()).toMatch(
      /"completion_tokens":33,"total_tokens":43,"cost":"0\.033500".*\n\ndata: \[DONE\]\n\n$/s,
    );
    expect(payment.facilitator.amounts).toEqual(["33500"]);
    expect(outcomes).toEqual(["settled"]);
  });
});
