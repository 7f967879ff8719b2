import { x402Client } from "@x402/core/client";
import { decodePaymentResponseHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { createPublicClient, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { decimalToAtomic } from "../server/money";
import { fundedPayer } from "./support/funded-payer";
import { quote, stack, usdcBalance } from "./support/payments";

const MODEL = "vendor-a/gpt-6-luna";

/**
 * The official client paying from a batch-settlement channel where a 402 offers one, depositing `deposit` (1 USDC)
 * when it opens the channel or runs short, as an agent that means to make many calls does.
 */
function channelClient(privateKey: `0x${string}`, deposit = 1_000_000n) {
  const account = privateKeyToAccount(privateKey);
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(stack().chainRpcUrl) }));
  const scheme = new BatchSettlementEvmScheme(signer, { depositStrategy: () => deposit });
  const client = new x402Client(
    (_version, accepts) => accepts.find((entry) => entry.scheme === "batch-settlement") ?? accepts[0]!,
  ).register("eip155:*", scheme);
  return { scheme, client };
}

function ledgerRows(payer: string): Record<string, unknown>[] {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select * from payments where payer = ? and scheme = 'batch-settlement' order by id")
      .all(payer.toLowerCase()) as Record<string, unknown>[];
  } finally {
    database.close();
  }
}

function channelRow(channelId: string): Record<string, unknown> | undefined {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database.prepare("select * from payment_channels where channel_id = ?").get(channelId.toLowerCase()) as
      Record<string, unknown> | undefined;
  } finally {
    database.close();
  }
}

const chat = (content: string) => ({ model: MODEL, messages: [{ role: "user" as const, content }], max_tokens: 60 });

describe("x402 batch-settlement: many paid calls from one channel", () => {
  it("offers a channel beside exact and upto, for at most the quote per request", async () => {
    const required = await quote("/v1/chat/completions", chat("offer"));
    const channel = required.accepts.find((entry) => entry.scheme === "batch-settlement");
    expect(channel).toMatchObject({ amount: required.accepts[0]!.amount, payTo: required.accepts[0]!.payTo });
    expect(channel!.extra).toMatchObject({ receiverAuthorizer: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/) });
  });

  it("charges 20 calls to one channel: one deposit on chain, each call its tokens, the total exact", async () => {
    const payer = await fundedPayer(20_000_000n);
    const before = await usdcBalance(payer.address);
    const { client } = channelClient(payer.key);
    const openai = new OpenAI({
      apiKey: "x402",
      baseURL: `${stack().appUrl}/v1`,
      fetch: wrapFetchWithPayment(fetch, client),
      maxRetries: 0,
    });
    let stated = 0n;
    let channelId = "";
    for (let index = 0; index < 20; index++) {
      const { data, response } = await openai.chat.completions.create(chat(`channel call ${index}`)).withResponse();
      const usage = data.usage as unknown as { cost: string };
      stated += decimalToAtomic(usage.cost, 6);
      const settlement = decodePaymentResponseHeader(response.headers.get("payment-response")!);
      channelId = (settlement.extra as { channelState: { channelId: string } }).channelState.channelId;
    }
    const deposited = before - (await usdcBalance(payer.address));
    expect(deposited).toBeGreaterThan(stated);
    const rows = ledgerRows(payer.address);
    expect(rows).toHaveLength(20);
    expect(rows.every((row) => row.status === "charged")).toBe(true);
    expect(rows.reduce((sum, row) => sum + BigInt(row.settled_amount as string), 0n)).toBe(stated);
    // One transaction: the deposit, with the first call.
    expect(rows.filter((row) => row.transaction !== null)).toHaveLength(1);
    const channel = channelRow(channelId)!;
    expect(BigInt(channel.charged_cumulative_amount as string)).toBe(stated);
    expect(BigInt(channel.balance as string)).toBe(deposited);
  });
});
