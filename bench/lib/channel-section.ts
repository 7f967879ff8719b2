// The benchmark's section on x402 batch-settlement channels: the same short chat answer paid from one channel, with
// `exact`, and with a prepaid key, in turn; the chain transactions each way took, what the caller paid per call, and
// the paid request's round trip (the 402 before it and the signing left out).
import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount, PAYER_ACCOUNT_INDEXES } from "../../cli/dev-stack/dev-accounts";
import { decimalToAtomic } from "../../server/core/money";
import { ms, percentile } from "./stats";
import { voucherCheckMs } from "./voucher-floor";

type Way = "channel" | "exact" | "prepaid";

const signerOf = (index: number, chainRpcUrl: string | undefined) =>
  toClientEvmSigner(
    privateKeyToAccount(devAccount(index).privateKey as `0x${string}`),
    createPublicClient({ transport: http(chainRpcUrl) }),
  );

/** The official client paying with a batch-settlement channel (a dev payer's, 2 USDC deposited with the first call). */
export function batchSettlementClient(chainRpcUrl: string | undefined): x402Client {
  return new x402Client(
    (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
  ).register(
    "eip155:*",
    new BatchSettlementEvmScheme(signerOf(PAYER_ACCOUNT_INDEXES[3], chainRpcUrl), {
      depositStrategy: () => 2_000_000n,
    }),
  );
}

/**
 * `calls` answers each way, taking turns. Returns the lines to print, and `claim`: what the channel's claim then
 * took (one transaction for all its vouchers, and one payout), which the caller measures through the CLI's path.
 */
export async function channelSection(
  stack: { appUrl: string; chainRpcUrl?: string },
  prepaidKey: string,
  calls: number,
  claim: () => Promise<{ claims: number; payout: boolean }>,
): Promise<string[]> {
  const channelClient = batchSettlementClient(stack.chainRpcUrl);
  const exactClient = new x402Client();
  registerExactEvmScheme(exactClient, { signer: signerOf(PAYER_ACCOUNT_INDEXES[4], stack.chainRpcUrl) });
  // The paid request's round trip: the request that carries the payment (or the key), timed where it is sent.
  const durations: Record<Way, number[]> = { channel: [], exact: [], prepaid: [] };
  const paid: Record<Way, bigint[]> = { channel: [], exact: [], prepaid: [] };
  const transactions: Record<Way, Set<string>> = { channel: new Set(), exact: new Set(), prepaid: new Set() };
  const timed =
    (way: Way): typeof fetch =>
    async (input, init) => {
      const request = new Request(input, init);
      const carries = request.headers.has("payment-signature") || request.headers.has("authorization");
      const started = performance.now();
      const response = await fetch(request);
      if (carries) durations[way].push(performance.now() - started);
      return response;
    };
  const send: Record<Way, typeof fetch> = {
    channel: wrapFetchWithPayment(timed("channel"), channelClient),
    exact: wrapFetchWithPayment(timed("exact"), exactClient),
    prepaid: timed("prepaid"),
  };
  for (let round = 0; round < calls; round++) {
    for (const way of ["channel", "exact", "prepaid"] as const) {
      const response = await send[way](`${stack.appUrl}/v1/chat/completions`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(way === "prepaid" ? { authorization: `Bearer ${prepaidKey}` } : {}),
        },
        body: JSON.stringify({
          model: "vendor-a/gpt-6-luna",
          messages: [{ role: "user", content: `channel bench ${round}` }],
          max_tokens: 16,
        }),
      });
      const answer = (await response.json()) as { usage?: { cost?: string } };
      if (response.status !== 200) throw new Error(`${way} call answered ${response.status}`);
      paid[way].push(decimalToAtomic(answer.usage?.cost ?? "0", 6));
      const settlement = response.headers.get("payment-response");
      const transaction = settlement && decodePaymentResponseHeader(settlement).transaction;
      if (transaction) transactions[way].add(transaction);
    }
  }
  const claimed = await claim();
  const average = (values: bigint[]) => Number(values.reduce((sum, value) => sum + value, 0n)) / values.length / 1e6;
  const p50 = (way: Way) => percentile(durations[way], 50);
  const chainTransactions = {
    channel: transactions.channel.size + claimed.claims + (claimed.payout ? 1 : 0),
    exact: transactions.exact.size,
    prepaid: 0,
  };
  const lines = (["channel", "exact", "prepaid"] as const).map(
    (way) =>
      `${way}: ${calls} calls, ${chainTransactions[way]} chain transaction(s)${way === "channel" ? ` (${transactions.channel.size} deposit, ${claimed.claims} claim, ${claimed.payout ? 1 : 0} payout)` : ""}; paid ${average(paid[way]).toFixed(6)} USD per call on average; paid request p50 ${ms(p50(way))}, p95 ${ms(percentile(durations[way], 95))}`,
  );
  const floor = await voucherCheckMs(calls, 137);
  lines.push(
    `a voucher call's paid request is ${ms(p50("channel") - p50("prepaid"))} slower than a prepaid call's at p50 (target: within 1 ms), and ${(p50("exact") / p50("channel")).toFixed(1)}x faster than an exact call's`,
    `the voucher's signature check alone, in a loop here: ${ms(floor.ours)} a voucher as our before-verify hook makes it on every call (libsecp256k1, server/payment/voucher-check.ts), ${ms(floor.sdk)} as the SDK's server scheme would (viem verifyTypedData)`,
  );
  return lines;
}
