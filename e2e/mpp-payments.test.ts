import Anthropic from "@anthropic-ai/sdk";
import { wrapFetchWithPayment } from "@x402/fetch";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { authorizationTypes } from "@x402/evm";
import Database from "better-sqlite3";
import { Challenge, Credential, evm as evmTypes, Receipt } from "mppx";
import { Mppx, evm } from "mppx/client";
import OpenAI from "openai";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { fundedPayer } from "./support/funded-payer";
import { chatBody, paymentClient, polygon, postJson, quote, stack, usdcBalance } from "./support/payments";
import { paysvc } from "./support/run-paysvc";
import { stackFacilitator } from "./support/payments";

/** mppx's own client with its EVM charge method, paying from a local-chain account (the local USDC's EIP-712 name). */
function mppClient(privateKey: `0x${string}`) {
  const account = privateKeyToAccount(privateKey);
  return Mppx.create({
    methods: [evm({ account, maxAmount: "5", authorization: polygon.usdc.eip712, decimals: 6 })],
    polyfill: false,
  });
}

const CHAT = "/v1/chat/completions";
type Payer = Awaited<ReturnType<typeof fundedPayer>>;

/** The ledger's rows of a payer, read from the stack's real SQLite file. */
function rowsOf(payer: string) {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select method, scheme, status, amount, settled_amount, [transaction] from payments where payer = ?")
      .all(payer.toLowerCase()) as {
      method: string;
      scheme: string;
      status: string;
      amount: string;
      settled_amount: string | null;
      transaction: string | null;
    }[];
  } finally {
    database.close();
  }
}

/** The deployment's challenge secret, as every instance over its database reads it. */
function deploymentSecret(): string {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    const row = database.prepare("select value from quote_holds where key = 'mpp challenge secret'").get() as {
      value: string;
    };
    return row.value;
  } finally {
    database.close();
  }
}

/** The 402 of a call: its MPP challenge and the x402 `exact` requirements beside it. */
async function challengeOf(path: string, body: unknown) {
  const response = await postJson(path, body);
  expect(response.status).toBe(402);
  const challenge = Challenge.fromHeaders(response.headers);
  const required = JSON.parse(Buffer.from(response.headers.get("payment-required")!, "base64").toString()) as {
    accepts: { amount: string; payTo: string; asset: string }[];
  };
  await response.body?.cancel();
  return { response, challenge, exact: required.accepts[0]! };
}

/** An evm charge credential signed by `key` for `challenge`, its authorization changed by `change`. */
async function signedCredential(
  key: `0x${string}`,
  challenge: ReturnType<typeof Challenge.from>,
  change: { to?: `0x${string}`; value?: string } = {},
) {
  const account = privateKeyToAccount(key);
  const request = challenge.request as { amount: string; recipient: string; currency: string };
  const validBefore = String(Math.floor(Date.now() / 1000) + 300);
  const message = {
    from: account.address,
    to: getAddress(change.to ?? request.recipient),
    value: change.value ?? request.amount,
    validAfter: "0",
    validBefore,
    nonce: evmTypes.Types.challengeHash(challenge),
  };
  const signature = await account.signTypedData({
    domain: { ...polygon.usdc.eip712, chainId: polygon.chainId, verifyingContract: getAddress(request.currency) },
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: { ...message, value: BigInt(message.value), validAfter: 0n, validBefore: BigInt(validBefore) },
  });
  const payload = { ...message, signature, type: "authorization" };
  return { header: Credential.serialize(Credential.from({ challenge, payload })), payload };
}

describe("MPP beside x402, paid by mppx's own client and evm charge method", () => {
  let payer: Payer;
  beforeAll(async () => {
    payer = await fundedPayer(20_000_000n);
  });

  it("pays a chat completion through the official openai SDK: the quote moves, a receipt names the transaction", async () => {
    const body = chatBody("Hello by MPP");
    const price = BigInt((await quote(CHAT, body)).accepts[0]!.amount);
    const before = await usdcBalance(payer.address);
    const openai = new OpenAI({ apiKey: "mpp", baseURL: `${stack().appUrl}/v1`, fetch: mppClient(payer.key).fetch });
    const { data, response } = await openai.chat.completions
      .create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)
      .withResponse();
    expect(data.choices[0]!.message.content).toContain("Hello by MPP");
    const receipt = Receipt.deserialize(response.headers.get("payment-receipt")!);
    expect(receipt).toMatchObject({ method: "evm", status: "success" });
    const usage = data.usage as unknown as { cost: string; cost_details: { transaction: string } };
    expect(receipt.reference).toBe(usage.cost_details.transaction);
    expect(response.headers.get("payment-response")).toBeNull();
    expect(before - (await usdcBalance(payer.address))).toBe(price);
    expect(rowsOf(payer.address)).toEqual([
      {
        method: "mpp",
        scheme: "exact",
        status: "settled",
        amount: String(price),
        settled_amount: String(price),
        transaction: receipt.reference,
      },
    ]);
  });

  it("pays a stream as x402 exact streams are: passed on while it settles, its transaction in its usage event", async () => {
    const body = { ...chatBody("Stream by MPP"), stream: true, stream_options: { include_usage: true } };
    const price = BigInt((await quote(CHAT, body)).accepts[0]!.amount);
    const before = await usdcBalance(payer.address);
    const openai = new OpenAI({ apiKey: "mpp", baseURL: `${stack().appUrl}/v1`, fetch: mppClient(payer.key).fetch });
    const { data: stream, response } = await openai.chat.completions
      .create(body as OpenAI.ChatCompletionCreateParamsStreaming)
      .withResponse();
    // The headers leave before the settlement (SETTLEMENT_ORDER=overlap): no receipt there, as no PAYMENT-RESPONSE.
    expect(response.headers.get("payment-receipt")).toBeNull();
    let text = "";
    let usage: { cost?: string; cost_details?: { transaction: string | null } } | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      usage = (chunk.usage as typeof usage) ?? usage;
    }
    expect(text).toContain("Stream by MPP");
    expect(usage?.cost_details?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    expect(before - (await usdcBalance(payer.address))).toBe(price);
    expect(rowsOf(payer.address).at(-1)).toMatchObject({ method: "mpp", status: "settled" });
  });

  it("pays a Messages call through the official Anthropic SDK", async () => {
    const body = { model: "vendor-a/gpt-6-luna", max_tokens: 64, messages: [{ role: "user" as const, content: "Hi" }] };
    const price = BigInt((await quote("/v1/messages", body)).accepts[0]!.amount);
    const before = await usdcBalance(payer.address);
    const anthropic = new Anthropic({
      apiKey: "unused",
      baseURL: stack().appUrl,
      fetch: mppClient(payer.key).fetch,
      maxRetries: 0,
    });
    const message = await anthropic.messages.create(body);
    expect(message.type).toBe("message");
    expect(before - (await usdcBalance(payer.address))).toBe(price);
  });

  it("buys a prepaid key, which then pays calls", async () => {
    const body = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
    const price = BigInt((await quote("/prepaid/codes", body)).accepts[0]!.amount);
    const before = await usdcBalance(payer.address);
    const response = await mppClient(payer.key).fetch(`${stack().appUrl}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(201);
    expect(response.headers.get("payment-receipt")).toBeTruthy();
    const { code } = (await response.json()) as { code: string };
    expect(before - (await usdcBalance(payer.address))).toBe(price);
    const openai = new OpenAI({ apiKey: code, baseURL: `${stack().appUrl}/v1`, maxRetries: 0 });
    const answer = await openai.chat.completions.create(chatBody("On the key") as OpenAI.ChatCompletionCreateParams);
    expect((answer as OpenAI.ChatCompletion).choices[0]!.message.content).toContain("On the key");
  });

  it("takes an authorization once, whichever protocol carries it", async () => {
    const body = chatBody("Once only");
    const { challenge, exact } = await challengeOf(CHAT, body);
    const { header, payload } = await signedCredential(payer.key, challenge);
    const before = await usdcBalance(payer.address);
    const first = await postJson(CHAT, body, { authorization: header });
    expect(first.status).toBe(200);
    await first.body?.cancel();
    const again = await postJson(CHAT, body, { authorization: header });
    expect(again.status).toBe(402);
    expect(((await again.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    // The same EIP-3009 authorization, wrapped as an x402 exact payment.
    const { signature, type: _type, ...authorization } = payload;
    const wrapped: PaymentPayload = {
      x402Version: 2,
      resource: { url: `${stack().appUrl}${CHAT}`, description: "", mimeType: "application/json" },
      accepted: { ...(await quote(CHAT, body)).accepts[0]!, amount: exact.amount },
      payload: { signature, authorization },
    };
    const asX402 = await postJson(CHAT, body, { "payment-signature": encodePaymentSignatureHeader(wrapped) });
    expect(asX402.status).toBe(402);
    expect(((await asX402.json()) as { error: { code: string } }).error.code).toBe("payment_already_used");
    expect(before - (await usdcBalance(payer.address))).toBe(BigInt(exact.amount));
  });

  it("refuses another amount, another recipient, an expired challenge and another deployment's: 402, nothing charged", async () => {
    const stranger = await fundedPayer(5_000_000n);
    const cheap = chatBody("cheap", { max_tokens: 16 });
    const dear = chatBody("cheap", { max_tokens: 4000 });
    const refusal = async (body: unknown, authorization: string) => {
      const response = await postJson(CHAT, body, { authorization });
      expect(response.status).toBe(402);
      expect(response.headers.get("www-authenticate")).toMatch(/^Payment /);
      return ((await response.json()) as { error: { code: string; message: string } }).error;
    };
    const { challenge } = await challengeOf(CHAT, cheap);
    // A credential for the cheaper call's challenge, sent with a dearer body.
    const forCheap = await signedCredential(stranger.key, challenge);
    expect(await refusal(dear, forCheap.header)).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringContaining("this request costs"),
    });
    // An authorization paying someone else, for a good challenge.
    const elsewhere = await signedCredential(stranger.key, challenge, {
      to: privateKeyToAccount(generatePrivateKey()).address,
    });
    expect(await refusal(cheap, elsewhere.header)).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringContaining("not this deployment's"),
    });
    // A challenge whose recipient was altered: its id no longer binds it.
    const altered = { ...challenge, request: { ...challenge.request, recipient: stranger.address } };
    expect(await refusal(cheap, (await signedCredential(stranger.key, altered)).header)).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringContaining("not issued by this deployment"),
    });
    // The same terms, expired; and issued by another deployment (another secret).
    const { id: _id, ...terms } = challenge;
    const expired = Challenge.from({
      ...terms,
      secretKey: deploymentSecret(),
      expires: new Date(Date.now() - 1000).toISOString(),
    });
    expect(await refusal(cheap, (await signedCredential(stranger.key, expired)).header)).toMatchObject({
      code: "payment_invalid",
      message: expect.stringContaining("expired"),
    });
    const foreign = Challenge.from({ ...terms, secretKey: "another deployment's secret" });
    expect(await refusal(cheap, (await signedCredential(stranger.key, foreign)).header)).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringContaining("not issued by this deployment"),
    });
    expect(await refusal(cheap, "Payment not-a-credential")).toMatchObject({ code: "payment_invalid" });
    expect(await usdcBalance(stranger.address)).toBe(5_000_000n);
    expect(rowsOf(stranger.address)).toEqual([]);
  });

  it("serves an x402 client and an MPP client side by side, each charged its quote once", async () => {
    const x402Payer = await fundedPayer(10_000_000n);
    const body = chatBody("side by side");
    const price = BigInt((await quote(CHAT, body)).accepts[0]!.amount);
    const x402Fetch = wrapFetchWithPayment(fetch, paymentClient(x402Payer.key));
    const mppFetch = mppClient(payer.key).fetch;
    const before = { x402: await usdcBalance(x402Payer.address), mpp: await usdcBalance(payer.address) };
    const call = (pay: typeof fetch) =>
      pay(`${stack().appUrl}${CHAT}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      }).then(async (response) => [response.status, await response.text()] as const);
    const answers = await Promise.all([0, 1, 2, 3].flatMap(() => [call(x402Fetch), call(mppFetch as typeof fetch)]));
    expect(answers.map(([status]) => status)).toEqual(Array(8).fill(200));
    expect(before.x402 - (await usdcBalance(x402Payer.address))).toBe(4n * price);
    expect(before.mpp - (await usdcBalance(payer.address))).toBe(4n * price);
    expect(rowsOf(x402Payer.address).map((row) => row.method)).toEqual(Array(4).fill("x402"));
  });

  it("says in llms.txt, AI-AGENTS.md, the OpenAPI document and /.well-known/x402 that both protocols are taken, and how", async () => {
    const text = async (path: string) => (await fetch(`${stack().appUrl}${path}`)).text();
    expect(await text("/llms.txt")).toContain("WWW-Authenticate: Payment");
    const agents = await text("/AI-AGENTS.md");
    expect(agents).toContain("## MPP (the Machine Payments Protocol)");
    expect(agents).toContain('import { Mppx, evm } from "mppx/client";');
    const manifest = JSON.parse(await text("/.well-known/x402"));
    expect(manifest.mpp).toMatchObject({ offered: true, chainId: polygon.chainId, receipt: "Payment-Receipt" });
    const openapi = JSON.parse(await text("/openapi.json"));
    const chat = openapi.paths[CHAT].post;
    expect(chat.responses[402].headers["WWW-Authenticate"]).toBeDefined();
    expect(chat.responses[200].headers["Payment-Receipt"]).toBeDefined();
    expect(chat.parameters.map((parameter: { name: string }) => parameter.name)).toContain("Authorization");
  });

  it("agrees with the chain in paysvc ledger reconcile, and the report counts each protocol", async () => {
    const env = {
      NETWORK: "eip155:137",
      DATABASE_URL: `file:${stack().databasePath}`,
      CHAIN_RPC_URL: stack().chainRpcUrl,
      ...stackFacilitator(),
    };
    const reconciled = await paysvc(["ledger", "reconcile", "--all", "--json"], 120_000, env);
    const report = JSON.parse(reconciled.stdout) as {
      outcomes: { agrees: { count: number } };
      rows: { id: number; outcome: string }[];
    };
    const database = new Database(stack().databasePath, { readonly: true });
    const mppRows = database.prepare("select id from payments where method = 'mpp'").all() as { id: number }[];
    database.close();
    expect(mppRows.length).toBeGreaterThanOrEqual(9);
    // Rows the chain confirms are counted, not listed: no MPP row is anything but `agrees`.
    const ids = new Set(mppRows.map(({ id }) => id));
    expect(report.rows.filter((row) => ids.has(row.id))).toEqual([]);
    expect(report.outcomes.agrees.count).toBeGreaterThanOrEqual(mppRows.length);
    const printed = await paysvc(["ledger", "report", "--since", "1h"], 60_000, env);
    expect(printed.stdout).toMatch(/by protocol: .*mpp \d+ payments \([\d.]+ USD settled\)/);
  });
});
