// The benchmark's section on x402 `upto` beside `exact`: the same short chat answer with a large output cap, paid
// each way in turn, its phases from Server-Timing, the gas each settlement used, and what the caller paid.
import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount, PAYER_ACCOUNT_INDEXES } from "../../cli/dev-stack/dev-accounts";
import { decimalToAtomic } from "../../server/core/money";
import { serverTimings } from "./server-timing";
import { ms, percentile } from "./stats";

type Scheme = "exact" | "upto";
const PHASES = ["quote", "verify", "upstream", "settle", "total"] as const;

/** `rounds` calls paid with each scheme, taking turns; the lines to print. */
export async function uptoSection(stack: { appUrl: string; chainRpcUrl?: string }, rounds: number): Promise<string[]> {
  const chain = createPublicClient({ transport: http(stack.chainRpcUrl) });
  // A payer of its own, with no standing Permit2 approval: each upto payment carries an EIP-2612 permit, which
  // the official client signs when the allowance left is below the maximum (as it is after any settlement).
  const account = privateKeyToAccount(devAccount(PAYER_ACCOUNT_INDEXES[1]).privateKey as `0x${string}`);
  const signer = toClientEvmSigner(account, chain);
  const client = new x402Client();
  // Under the pattern registerExactEvmScheme uses (eip155:*): the client looks a scheme up under the most specific
  // network it has, so upto under eip155:137 alone would hide exact there.
  client.register("eip155:*", new UptoEvmScheme(signer));
  registerExactEvmScheme(client, { signer });
  const signFor = (required: PaymentRequired, scheme: Scheme) =>
    client.createPaymentPayload({ ...required, accepts: required.accepts.filter((entry) => entry.scheme === scheme) });

  const timings: Record<Scheme, Record<string, number[]>> = { exact: {}, upto: {} };
  const gas: Record<Scheme, bigint[]> = { exact: [], upto: [] };
  const paid: Record<Scheme, bigint[]> = { exact: [], upto: [] };
  for (let round = 0; round < rounds; round++) {
    for (const scheme of round % 2 === 0 ? (["exact", "upto"] as const) : (["upto", "exact"] as const)) {
      // A short answer under a large cap: what a caller who leaves max_tokens at its default pays for.
      const body = JSON.stringify({
        model: "vendor-a/gpt-5.6-sol",
        messages: [{ role: "user", content: `upto ${round}` }],
        max_tokens: 4096,
      });
      const headers = { "content-type": "application/json" };
      const challenge = await fetch(`${stack.appUrl}/v1/chat/completions`, { method: "POST", headers, body });
      await challenge.text();
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required")!);
      const signature = encodePaymentSignatureHeader(await signFor(required, scheme));
      const response = await fetch(`${stack.appUrl}/v1/chat/completions`, {
        method: "POST",
        headers: { ...headers, "PAYMENT-SIGNATURE": signature },
        body,
      });
      const answer = (await response.json()) as { usage?: { cost?: string } };
      if (response.status !== 200) throw new Error(`${scheme} payment answered ${response.status}`);
      for (const [name, duration] of Object.entries(serverTimings(response))) {
        (timings[scheme][name] ??= []).push(duration);
      }
      const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
      const receipt = await chain.getTransactionReceipt({ hash: settlement.transaction as `0x${string}` });
      gas[scheme].push(receipt.gasUsed);
      paid[scheme].push(decimalToAtomic(answer.usage?.cost ?? "0", 6));
    }
  }
  const median = (values: bigint[]) => [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[values.length >> 1]!;
  const lines = (["exact", "upto"] as const).map(
    (scheme) =>
      `${scheme}: ${PHASES.map((phase) => `${phase} p50 ${ms(percentile(timings[scheme][phase] ?? [], 50))}`).join(", ")}; settlement gas p50 ${median(gas[scheme])}; paid p50 ${median(paid[scheme])} atomic units`,
  );
  const saving = Number(median(paid.exact)) / Number(median(paid.upto));
  const slower = percentile(timings.upto.settle ?? [], 50) - percentile(timings.exact.settle ?? [], 50);
  lines.push(
    `a short answer (max_tokens 4096) costs the caller ${saving.toFixed(1)}x less with upto; its settlement takes ${ms(slower)} longer at p50 and ${(Number(median(gas.upto)) / Number(median(gas.exact))).toFixed(2)}x the gas`,
  );
  return lines;
}
