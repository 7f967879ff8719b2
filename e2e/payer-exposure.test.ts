import { wrapFetchWithPayment } from "@x402/fetch";
import { PERMIT2_ADDRESS } from "@x402/evm";
import { createPublicClient, createWalletClient, erc20Abi, http, maxUint256 } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { polygon as polygonChain } from "viem/chains";
import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../config/catalog/default-catalog";
import { fundedPayer } from "./support/funded-payer";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { paidStream, statedCost, type StreamOutcome } from "./support/paid-stream";
import {
  paymentClient,
  paymentRowsOf,
  polygon,
  quote,
  stack,
  uptoPaymentClient,
  usdcBalance,
} from "./support/payments";
import { startRpcProxy } from "./support/rpc-proxy";

const model = defaultCatalog().chat.find((chat) => chat.id === "vendor-a/gpt-5.6-sol")!;
/** A 2,000-token stream on gpt-5.6-sol: its upto maximum is the 29,037 units of the attack. */
const body = (content: string) => ({
  model: model.id,
  messages: [{ role: "user", content }],
  max_tokens: 2000,
  stream: true,
  stream_options: { include_usage: true },
});

/** One upto stream paid by the official client. */
const streamOnce = (privateKey: `0x${string}`, request: unknown) =>
  paidStream(
    wrapFetchWithPayment(fetch, uptoPaymentClient(privateKey)),
    `${stack().appUrl}/v1/chat/completions`,
    request,
  );

/** The payer approves Permit2 for all its USDC, paying its own gas: what "funded for upto" means beyond a permit. */
async function approvePermit2(privateKey: `0x${string}`): Promise<void> {
  const transport = http(stack().chainRpcUrl);
  const chain = { ...polygonChain, rpcUrls: { default: { http: [stack().chainRpcUrl] } } };
  const wallet = createWalletClient({ account: privateKeyToAccount(privateKey), chain, transport });
  const hash = await wallet.writeContract({
    address: polygon.usdc.address,
    abi: erc20Abi,
    functionName: "approve",
    args: [PERMIT2_ADDRESS, maxUint256],
  });
  await createPublicClient({ transport }).waitForTransactionReceipt({ hash });
}

/** Eight upto streams at once from one payer, and what each came to. */
async function eightAtOnce(privateKey: `0x${string}`, label: string): Promise<StreamOutcome[]> {
  return Promise.all(Array.from({ length: 8 }, () => streamOnce(privateKey, body(`${label}: stream to me`))));
}

describe("a payer who opens more upto streams than it can pay for", () => {
  it("is served no more than it pays, with a wallet funded for exactly one maximum", async () => {
    const maximum = BigInt((await quote("/v1/chat/completions", body("one maximum: stream to me"))).accepts[1]!.amount);
    expect(maximum).toBe(29_037n);
    const owner = await fundedPayer(maximum);
    const payToBefore = await usdcBalance(stack().payTo);

    const outcomes = await eightAtOnce(owner.key, "one maximum");

    const served = outcomes.filter((outcome) => outcome.served);
    const stated = statedCost(served);
    const paid = maximum - (await usdcBalance(owner.address));
    expect(served).toHaveLength(1);
    expect(stated).toBe(paid);
    expect((await usdcBalance(stack().payTo)) - payToBefore).toBe(paid);
    // The others were answered 402 naming the limit, before any work.
    for (const outcome of outcomes.filter((outcome) => !outcome.served)) {
      expect(outcome).toEqual({ served: false, status: 402, code: "payer_limit_exceeded" });
    }
    const statuses = paymentRowsOf(owner.address).map((row) => row.status);
    expect(statuses.filter((status) => status === "settled")).toHaveLength(served.length);
    expect(statuses).not.toContain("settle_unknown");
    expect(statuses).not.toContain("unpaid");
  });

  it("is served no more than it pays with nine maxima but no Permit2 allowance: one permit lands at a time", async () => {
    const maximum = BigInt((await quote("/v1/chat/completions", body("nine maxima: stream to me"))).accepts[1]!.amount);
    const owner = await fundedPayer(maximum * 9n);

    const outcomes = await eightAtOnce(owner.key, "nine maxima");

    const stated = statedCost(outcomes);
    expect(stated).toBe(maximum * 9n - (await usdcBalance(owner.address)));
    expect(outcomes.filter((outcome) => outcome.served)).toHaveLength(1);
    const statuses = paymentRowsOf(owner.address).map((row) => row.status);
    expect(statuses).not.toContain("settle_unknown");
    expect(statuses).not.toContain("unpaid");
  });

  it("serves all eight at once, each paid, a wallet funded and approved for all eight", async () => {
    const maximum = BigInt((await quote("/v1/chat/completions", body("funded: stream to me"))).accepts[1]!.amount);
    const owner = await fundedPayer(maximum * 8n);
    await approvePermit2(owner.key);

    const outcomes = await eightAtOnce(owner.key, "funded");

    expect(outcomes.filter((outcome) => !outcome.served)).toEqual([]);
    const stated = statedCost(outcomes);
    expect(stated).toBe(maximum * 8n - (await usdcBalance(owner.address)));
    expect(paymentRowsOf(owner.address).map((row) => row.status)).toEqual(Array(8).fill("settled"));
  });

  it("serves exact streams beyond what the wallet holds settled-first: none goes out unpaid", async () => {
    const request = body("exact beyond the balance: stream to me");
    const price = BigInt((await quote("/v1/chat/completions", request)).accepts[0]!.amount);
    const owner = await fundedPayer(price);
    const pay = wrapFetchWithPayment(fetch, paymentClient(owner.key));

    const outcomes = await Promise.all(
      Array.from({ length: 4 }, () => paidStream(pay, `${stack().appUrl}/v1/chat/completions`, request)),
    );

    const served = outcomes.filter((outcome) => outcome.served);
    expect(served).toHaveLength(1);
    expect(statedCost(served)).toBe(price);
    expect(await usdcBalance(owner.address)).toBe(0n);
    for (const outcome of outcomes.filter((outcome) => !outcome.served)) {
      expect(outcome).toMatchObject({ served: false, status: 402 });
    }
    const statuses = paymentRowsOf(owner.address).map((row) => row.status);
    expect(statuses.filter((status) => status === "settled")).toHaveLength(1);
    expect(statuses).not.toContain("unpaid");
  });

  it("refuses an exact payment that would spend what an upto stream in flight holds, and the stream is paid", async () => {
    const stalled = body("[paysvc-dev-fault:stall-mid-stream] held while I pay again");
    const maximum = BigInt((await quote("/v1/chat/completions", stalled)).accepts[1]!.amount);
    const owner = await fundedPayer(maximum);
    const url = `${stack().appUrl}/v1/chat/completions`;
    const streaming = await wrapFetchWithPayment(fetch, uptoPaymentClient(owner.key))(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(stalled),
    });
    expect(streaming.status).toBe(200);
    const reader = streaming.body!.getReader();
    expect((await reader.read()).done).toBe(false);

    // A whole answer for the same amount, paid with exact: settled before it leaves, it would take the stream's funds.
    const whole = { ...body("exact beside a held stream"), stream: false, stream_options: undefined };
    const refused = await wrapFetchWithPayment(fetch, paymentClient(owner.key))(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(whole),
    });
    expect(refused.status).toBe(402);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("payer_limit_exceeded");

    // The caller leaves the stream: it is charged what it passed on, from the funds its hold kept.
    await reader.cancel();
    for (let waited = 0; paymentRowsOf(owner.address).some((row) => row.status === "verified") && waited < 10_000;) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      waited += 100;
    }
    const rows = paymentRowsOf(owner.address);
    expect(rows.map((row) => row.status).sort()).toEqual(["failed", "settled"]);
    expect(rows.find((row) => row.status === "failed")?.failure_reason).toBe("payer_limit_exceeded");
    expect(await usdcBalance(owner.address)).toBeLessThan(maximum);
  });

  it("reads the funds again when another of the payer's payments was taken while they were read", async () => {
    const request = body("read before taken: stream to me");
    const maximum = BigInt((await quote("/v1/chat/completions", request)).accepts[1]!.amount);
    const owner = await fundedPayer(maximum);
    await approvePermit2(owner.key);
    // A second instance on the same database whose chain reads come back late.
    const rpc = await startRpcProxy(stack().chainRpcUrl);
    const app = await startExtraApp({ CHAIN_RPC_URL: rpc.url });
    try {
      const readAtGate = rpc.gateBalanceOf(owner.address);
      const pay = wrapFetchWithPayment(fetch, uptoPaymentClient(owner.key));
      const late = paidStream(pay, `${app.url}/v1/chat/completions`, request);
      // Its read says the wallet holds one maximum; meanwhile another stream is served and settled from it.
      await readAtGate;
      expect((await streamOnce(owner.key, request)).served).toBe(true);
      rpc.openGate();
      expect(await late).toEqual({ served: false, status: 402, code: "payer_limit_exceeded" });
    } finally {
      await app.stop();
      await rpc.stop();
    }
    const rows = paymentRowsOf(owner.address);
    expect(rows.map((row) => row.status).sort()).toEqual(["failed", "settled"]);
    expect(rows.find((row) => row.status === "failed")?.failure_reason).toBe("payer_limit_exceeded");
  });

  it("lets a payer's next stream count on what a stream being settled does not take", async () => {
    const request = body("being settled: stream to me");
    const maximum = BigInt((await quote("/v1/chat/completions", request)).accepts[1]!.amount);
    // One maximum and all but one unit of another: two maxima held at once would not fit.
    const owner = await fundedPayer(2n * maximum - 1n);
    await approvePermit2(owner.key);
    // A second instance whose settlements wait at a gate in front of the facilitator.
    const proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    proxy.setMode({ kind: "gate" });
    const app = await startExtraApp({ FACILITATOR_URL: proxy.url, FACILITATOR_TIMEOUT_MS: "15000" });
    try {
      const pay = wrapFetchWithPayment(fetch, uptoPaymentClient(owner.key));
      const first = paidStream(pay, `${app.url}/v1/chat/completions`, request);
      // Its answer is out and its settlement (of what it used, far below its maximum) on its way.
      await proxy.settleAtGate(owner.address);
      proxy.setMode({ kind: "forward" });
      const second = await paidStream(pay, `${app.url}/v1/chat/completions`, request);
      proxy.openGate();
      const outcomes = [await first, second];
      expect(outcomes.filter((outcome) => !outcome.served)).toEqual([]);
      expect(statedCost(outcomes)).toBe(2n * maximum - 1n - (await usdcBalance(owner.address)));
    } finally {
      await app.stop();
      await proxy.stop();
    }
    expect(paymentRowsOf(owner.address).map((row) => row.status)).toEqual(["settled", "settled"]);
  });
});
