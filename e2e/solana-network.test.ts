import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  createKeyPairSignerFromBytes,
  createSolanaRpc,
  generateKeyPairSigner,
  getBase58Encoder,
  mainnet,
  type Address,
  type KeyPairSigner,
} from "@solana/kit";
import { findAssociatedTokenPda, TOKEN_PROGRAM_ADDRESS } from "@solana-program/token";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import {
  createSIWxClientExtension,
  createSIWxPayload,
  encodeSIWxHeader,
  type SIWxExtensionInfo,
  type SIWxSigner,
  type SupportedChain,
} from "@x402/extensions/sign-in-with-x";
import type { PaymentRequired } from "@x402/core/types";
import { wrapFetchWithPayment } from "@x402/fetch";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { RunningStack } from "../cli/dev-stack/start-stack";
import { launchChromium } from "./support/chromium";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { chatBody, quoteOf, startNetworkStack } from "./support/network-stack";
import { paysvc } from "./support/run-paysvc";

const SOLANA = "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";
const USDC_MINT = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v";

let started: Awaited<ReturnType<typeof startNetworkStack>>;
const stack = (): RunningStack => started.stack;

beforeAll(async () => {
  started = await startNetworkStack(SOLANA);
});
afterAll(async () => {
  await started?.remove();
});

async function payerSigner(index: number): Promise<KeyPairSigner> {
  return createKeyPairSignerFromBytes(getBase58Encoder().encode(stack().payers[index]!.privateKey));
}

/** The official x402 client with the official SVM "exact" scheme, reading the mint and blockhash over our RPC. */
function svmClient(signer: KeyPairSigner): x402Client {
  const client = new x402Client();
  client.register(SOLANA, new ExactSvmScheme(signer, { rpcUrl: stack().chainRpcUrl }));
  client.setSpendControls({ maxAmountPerPayment: "$5" });
  return client;
}

async function usdcBalance(owner: string): Promise<bigint> {
  const [tokenAccount] = await findAssociatedTokenPda({
    mint: USDC_MINT as Address,
    owner: owner as Address,
    tokenProgram: TOKEN_PROGRAM_ADDRESS,
  });
  const rpc = createSolanaRpc(mainnet(stack().chainRpcUrl!));
  return BigInt((await rpc.getTokenAccountBalance(tokenAccount).send()).value.amount);
}

async function postChat(body: unknown, paymentSignature: string) {
  return fetch(`${stack().appUrl}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": paymentSignature },
    body: JSON.stringify(body),
  });
}

/** A payment the payer signed for `signedFor`, presented as if it met `presented` (what the service asked). */
async function forgedPayment(signer: KeyPairSigner, presented: PaymentRequired, signedFor: Record<string, unknown>) {
  // A payer set on cheating: its own client's spend controls must not stop it signing another token.
  const client = svmClient(signer).setSpendControls(false);
  const altered = { ...presented, accepts: [{ ...presented.accepts[0]!, ...signedFor }] };
  const payload = await client.createPaymentPayload(altered);
  return encodePaymentSignatureHeader({ ...payload, accepted: presented.accepts[0]! });
}

describe("Solana (solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp) on the embedded LiteSVM validator", () => {
  it("names its own network, mint and fee payer in /health, /v1/models, the 402 and the discovery documents", async () => {
    expect((await (await fetch(`${stack().appUrl}/health`)).json()).network).toBe(SOLANA);
    const models = await (await fetch(`${stack().appUrl}/v1/models`)).json();
    expect(models.data[0].payment).toMatchObject({ network: SOLANA, asset: USDC_MINT });
    const required = await quoteOf(stack(), "/v1/chat/completions", chatBody("x"));
    expect(required.accepts[0]).toMatchObject({ scheme: "exact", network: SOLANA, asset: USDC_MINT });
    expect(required.accepts[0]!.payTo).toBe(stack().payTo);
    expect(required.accepts[0]!.extra.feePayer).toMatch(/^[1-9A-HJ-NP-Za-km-z]{32,44}$/);
    const llms = await (await fetch(`${stack().appUrl}/llms.txt`)).text();
    expect(llms).toContain("TransferChecked");
    expect(llms).not.toContain("EIP-3009");
    const agents = await (await fetch(`${stack().appUrl}/AI-AGENTS.md`)).text();
    expect(agents).toContain("@x402/svm/exact/client");
    // Channels are EVM only: no refund route here.
    const refund = await fetch(`${stack().appUrl}/v1/channels/refund`);
    expect(refund.status).toBe(404);
    expect((await refund.json()).error.message).toMatch(/no batch-settlement channels/);
    // MPP is EVM only: no challenge beside the x402 one, and the documents say why.
    const challenged = await fetch(`${stack().appUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chatBody("x")),
    });
    expect(challenged.status).toBe(402);
    expect(challenged.headers.get("www-authenticate")).toBeNull();
    const manifest = await (await fetch(`${stack().appUrl}/.well-known/x402`)).json();
    expect(manifest.mpp).toEqual({ offered: false, reason: expect.stringContaining("MPP is not offered on Solana") });
    expect(agents).toContain("MPP is not offered on Solana");
  });

  it("takes the official SVM client's payment for a chat completion and a prepaid pack, exactly the quote", async () => {
    const signer = await payerSigner(0);
    const paidFetch = wrapFetchWithPayment(fetch, svmClient(signer));
    const body = chatBody("on solana");
    const chatPrice = BigInt((await quoteOf(stack(), "/v1/chat/completions", body)).accepts[0]!.amount);
    const before = { payer: await usdcBalance(signer.address), payTo: await usdcBalance(stack().payTo) };

    const openai = new OpenAI({ apiKey: "x402", baseURL: `${stack().appUrl}/v1`, fetch: paidFetch, maxRetries: 0 });
    const { data: completion, response } = await openai.chat.completions.create(body as never).withResponse();
    expect(completion.choices[0]?.message.content).toContain("on solana");
    const settlement = JSON.parse(Buffer.from(response.headers.get("payment-response")!, "base64").toString());
    expect(settlement).toMatchObject({ success: true, network: SOLANA, payer: signer.address });
    expect(settlement.transaction).toMatch(/^[1-9A-HJ-NP-Za-km-z]{64,88}$/);
    const afterChat = { payer: await usdcBalance(signer.address), payTo: await usdcBalance(stack().payTo) };
    expect(before.payer - afterChat.payer).toBe(chatPrice);
    expect(afterChat.payTo - before.payTo).toBe(chatPrice);

    const pack = await paidFetch(`${stack().appUrl}/prepaid/codes/auto`, { method: "POST" });
    expect(pack.status).toBe(201);
    const key = (await pack.json()) as { code?: string; prepaid_code?: string };
    expect(JSON.stringify(key)).toMatch(/paysvc_pk_/);
    expect(afterChat.payer - (await usdcBalance(signer.address))).toBe(8000n);
    expect((await usdcBalance(stack().payTo)) - afterChat.payTo).toBe(8000n);
  });

  it("says on the console's pages that buying in the browser is for EVM networks, and how to buy here", async () => {
    for (const path of ["/", "/keys"]) {
      const html = await (await fetch(`${stack().appUrl}${path}`)).text();
      expect(html, path).toContain("Buying in the browser is for EVM networks for now.");
      expect(html, path).toContain("@x402/svm/exact/client");
      expect(html, path).not.toContain("Buy with a browser wallet");
    }
    const browser = await launchChromium();
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      await page.goto(`${stack().appUrl}/`);
      const card = page.locator("section.card").filter({ has: page.getByTestId("purchase-solana") });
      expect(await card.innerText()).toContain(`This deployment is paid on Solana (${SOLANA})`);
      mkdirSync(join(process.cwd(), "test-results", "wallet-purchase"), { recursive: true });
      await card.screenshot({ path: join(process.cwd(), "test-results", "wallet-purchase", "8-solana.png") });
    } finally {
      await browser.close();
    }
  });

  it("lets the wallet that paid for a key sign in with its ed25519 key, list and rotate it; no other wallet can", async () => {
    const owner = await payerSigner(4);
    const stranger = await payerSigner(5);
    const pack = await wrapFetchWithPayment(fetch, svmClient(owner))(`${stack().appUrl}/prepaid/codes/auto`, {
      method: "POST",
    });
    expect(pack.status).toBe(201);
    const bought = (await pack.json()) as { id: number; code: string };
    const keysUrl = `${stack().appUrl}/v1/prepaid/keys`;
    // The challenge names this network and its signature scheme.
    const unsigned = await fetch(keysUrl);
    expect(unsigned.status).toBe(402);
    const required = decodePaymentRequiredHeader(unsigned.headers.get("payment-required")!);
    const extension = required.extensions!["sign-in-with-x"] as {
      info: SIWxExtensionInfo;
      supportedChains: SupportedChain[];
    };
    expect(extension.supportedChains).toEqual([{ chainId: SOLANA, type: "ed25519" }]);
    // The official client's sign-in extension with a @solana/kit signer (its SolanaKitSigner type declares looser
    // parameters than @solana/kit's, hence the cast; at run time it reads `address` and `signMessages`).
    const signedIn = (signer: KeyPairSigner) =>
      wrapFetchWithPayment(
        fetch,
        new x402Client().registerExtension(createSIWxClientExtension({ signers: [signer as unknown as SIWxSigner] })),
      );
    const listed = await signedIn(owner)(keysUrl);
    expect(listed.status).toBe(200);
    const list = (await listed.json()) as { owner: string; data: { id: number }[] };
    // A Solana owner as written: base58 is case-sensitive.
    expect(list.owner).toBe(owner.address);
    expect(list.data.map((key) => key.id)).toEqual([bought.id]);
    expect(((await (await signedIn(stranger)(keysUrl)).json()) as { data: unknown[] }).data).toEqual([]);
    // Another key's signature on a message in the owner's name is refused.
    const info = { ...extension.info, ...extension.supportedChains[0]! };
    const strangers = await createSIWxPayload(info, stranger as unknown as SIWxSigner, keysUrl);
    const forged = encodeSIWxHeader({ ...strangers, address: owner.address });
    const refused = await fetch(keysUrl, { headers: { "sign-in-with-x": forged } });
    expect(refused.status).toBe(401);
    expect((await refused.json()).error.code).toBe("invalid_sign_in");
    // Rotated: the old code is refused, the new one spends the same key.
    const rotated = await signedIn(owner)(`${keysUrl}/rotate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ key: bought.id }),
    });
    expect(rotated.status).toBe(200);
    const { code } = (await rotated.json()) as { code: string };
    const status = (key: string) =>
      fetch(`${stack().appUrl}/v1/prepaid/status`, { headers: { authorization: `Bearer ${key}` } });
    expect((await status(bought.code)).status).toBe(401);
    expect((await status(code)).status).toBe(200);
  });

  it("refuses a replayed transaction: one settlement, then 402 payment_already_used", async () => {
    const signer = await payerSigner(1);
    const body = chatBody("replay me");
    const required = await quoteOf(stack(), "/v1/chat/completions", body);
    const header = encodePaymentSignatureHeader(await svmClient(signer).createPaymentPayload(required));
    const before = await usdcBalance(signer.address);

    const first = await postChat(body, header);
    expect(first.status).toBe(200);
    await first.json();
    const replay = await postChat(body, header);
    expect(replay.status).toBe(402);
    expect((await replay.json()).error.code).toBe("payment_already_used");
    expect(before - (await usdcBalance(signer.address))).toBe(BigInt(required.accepts[0]!.amount));
  });

  it("refuses a transfer to the wrong account, of the wrong amount or of another token, settling nothing", async () => {
    const signer = await payerSigner(2);
    const body = chatBody("pay someone else");
    const required = await quoteOf(stack(), "/v1/chat/completions", body);
    const stranger = await generateKeyPairSigner();
    const before = await usdcBalance(signer.address);

    const wrongRecipient = await postChat(body, await forgedPayment(signer, required, { payTo: stranger.address }));
    expect(wrongRecipient.status).toBe(402);
    const recipientError = (await wrongRecipient.json()).error;
    expect(recipientError.code).toBe("payment_rejected");
    expect(recipientError.message).toContain("recipient_mismatch");

    const underpaid = String(BigInt(required.accepts[0]!.amount) - 1n);
    const wrongAmount = await postChat(body, await forgedPayment(signer, required, { amount: underpaid }));
    expect(wrongAmount.status).toBe(402);
    const amountError = (await wrongAmount.json()).error;
    expect(amountError.code).toBe("payment_rejected");
    expect(amountError.message).toContain("amount_mismatch");

    const wrappedSol = "So11111111111111111111111111111111111111112";
    const wrongMint = await postChat(body, await forgedPayment(signer, required, { asset: wrappedSol }));
    expect(wrongMint.status).toBe(402);
    const mintError = (await wrongMint.json()).error;
    expect(mintError.code).toBe("payment_rejected");
    expect(mintError.message).toContain("mint_mismatch");

    // Terms that differ from the quote are refused before the facilitator is asked.
    const client = svmClient(signer);
    const mismatched = await client.createPaymentPayload({
      ...required,
      accepts: [{ ...required.accepts[0]!, payTo: stranger.address }],
    });
    const mismatch = await postChat(body, encodePaymentSignatureHeader(mismatched));
    expect(mismatch.status).toBe(402);
    expect((await mismatch.json()).error.code).toBe("payment_mismatch");
    expect(decodePaymentRequiredHeader(mismatch.headers.get("payment-required")!).accepts[0]!.payTo).toBe(
      stack().payTo,
    );

    expect(await usdcBalance(signer.address)).toBe(before);
  });

  it("refuses a transaction whose payer signature is not the payer's, before the facilitator sees it", async () => {
    const signer = await payerSigner(2);
    const body = chatBody("a forged signature");
    const required = await quoteOf(stack(), "/v1/chat/completions", body);
    const payload = await svmClient(signer).createPaymentPayload(required);
    const transaction = Buffer.from((payload.payload as { transaction: string }).transaction, "base64");
    // Two signatures (the fee payer's, empty, then the payer's) after a one-byte count: one bit of the payer's flips.
    transaction[1 + 64] = transaction[1 + 64]! ^ 1;
    const forged = { ...payload, payload: { transaction: transaction.toString("base64") } };
    const before = await usdcBalance(signer.address);
    const response = await postChat(body, encodePaymentSignatureHeader(forged));
    expect(response.status).toBe(402);
    expect((await response.json()).error).toMatchObject({
      code: "payment_rejected",
      message: expect.stringContaining("signature is not the payer's"),
    });
    expect(await usdcBalance(signer.address)).toBe(before);
  });

  it("answers a garbled Solana transaction with 402 payment_invalid", async () => {
    const required = await quoteOf(stack(), "/v1/chat/completions", chatBody("garbled"));
    const payload = { x402Version: 2, accepted: required.accepts[0], payload: { transaction: "AAAA" } };
    const response = await postChat(chatBody("garbled"), Buffer.from(JSON.stringify(payload)).toString("base64"));
    expect(response.status).toBe(402);
    expect((await response.json()).error.code).toBe("payment_invalid");
  });

  it("lets the MCP helper pay with a Solana keypair, and refuses an EVM key on this network", async () => {
    const connect = async (privateKey: string) => {
      const client = new Client({ name: "paysvc-e2e", version: "1.0.0" });
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: ["cli/bin.mjs", "mcp"],
          env: {
            PATH: process.env.PATH ?? "",
            PAYSVC_WALLET_PRIVATE_KEY: privateKey,
            PAYSVC_SOLANA_RPC_URL: stack().chainRpcUrl!,
            PAYSVC_ORIGIN: stack().appUrl,
            PAYSVC_PAY_TO: stack().payTo,
            PAYSVC_MAX_PAYMENT_USD: "0.50",
          },
          stderr: "pipe",
        }),
      );
      return client;
    };
    const request = chatBody("an agent on solana");
    const price = BigInt((await quoteOf(stack(), "/v1/chat/completions", request)).accepts[0]!.amount);
    const payer = stack().payers[3]!;
    const before = await usdcBalance(payer.address);

    const client = await connect(payer.privateKey);
    try {
      const result = await client.callTool({ name: "chat_completion", arguments: request });
      expect(result.isError).toBeFalsy();
      const text = (result.content as { text: string }[])[0]!.text;
      expect(JSON.parse(text).payment).toMatchObject({
        amount: price.toString(),
        network: SOLANA,
        payTo: stack().payTo,
      });
      expect(text).not.toContain(payer.privateKey);
    } finally {
      await client.close();
    }
    expect(before - (await usdcBalance(payer.address))).toBe(price);

    const evmClient = await connect(`0x${"42".repeat(32)}`);
    try {
      const refused = await evmClient.callTool({ name: "chat_completion", arguments: request });
      expect(refused.isError).toBe(true);
      expect((refused.content as { text: string }[])[0]!.text).toMatch(
        /wallet key is for EVM networks; nothing was paid/,
      );
    } finally {
      await evmClient.close();
    }
  });
});

describe("reconciling Solana payments with the embedded validator", () => {
  let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  beforeAll(async () => {
    // An app whose facilitator holds /settle past the app's 1.5 s timeout, then passes it on.
    proxy = await startFacilitatorProxy(stack().facilitatorUrl, stack().facilitatorAuthHeader);
    app = await startExtraApp(
      { FACILITATOR_TIMEOUT_MS: "1500" },
      { over: { ...started.deployment, facilitatorUrl: proxy.url } },
    );
  });
  afterAll(async () => {
    await app?.stop();
    await proxy?.stop();
  });

  const row = () => {
    const database = new Database(started.deployment.databasePath, { readonly: true });
    try {
      return database.prepare("select * from payments order by id desc limit 1").get() as Record<string, unknown>;
    } finally {
      database.close();
    }
  };
  const reconcile = async (...args: string[]) => {
    const run = await paysvc(["ledger", "reconcile", "--json", ...args], 60_000, {
      NETWORK: SOLANA,
      DATABASE_URL: `file:${started.deployment.databasePath}`,
      CHAIN_RPC_URL: stack().chainRpcUrl!,
      FACILITATOR_URL: stack().facilitatorUrl,
      FACILITATOR_AUTH_HEADER: stack().facilitatorAuthHeader!,
    });
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout);
  };
  /** A paid chat through the app, by the official SVM client; delivered whatever the settle does. */
  const paidChat = async (signer: KeyPairSigner, content: string) => {
    const response = await fetch(`${app.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chatBody(content)),
    });
    const required = decodePaymentRequiredHeader(response.headers.get("payment-required")!);
    await response.body?.cancel();
    const amount = BigInt(required.accepts[0]!.amount);
    const payload = await svmClient(signer).createPaymentPayload(required);
    const paid = await fetch(`${app.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) },
      body: JSON.stringify(chatBody(content)),
    });
    expect(paid.status).toBe(200);
    return amount;
  };

  it("marks a settle that timed out and landed later as settled, with its signature and amount", async () => {
    const signer = await payerSigner(3);
    const before = await usdcBalance(signer.address);
    proxy.setMode({ kind: "hold", holdMs: 2_500 });
    const amount = await paidChat(signer, "held settle on Solana");
    expect(row()).toMatchObject({ status: "settle_unknown", transaction: null, amount: amount.toString() });
    const late = await proxy.lastForwarded()!;
    expect(late).toMatchObject({ success: true });
    expect(await usdcBalance(signer.address)).toBe(before - amount);

    const report = await reconcile();
    expect(report.rows).toEqual([
      expect.objectContaining({
        id: row().id,
        outcome: "settled",
        transaction: late.transaction,
        amount: amount.toString(),
      }),
    ]);
    expect(row()).toMatchObject({ status: "settled", transaction: late.transaction });
  });

  it("settles one whose settle never reached the facilitator, and then the whole ledger agrees", async () => {
    const signer = await payerSigner(3);
    const before = await usdcBalance(signer.address);
    proxy.setMode({ kind: "drop" });
    const amount = await paidChat(signer, "dropped settle on Solana");
    expect(row()).toMatchObject({ status: "settle_unknown" });
    expect(await usdcBalance(signer.address)).toBe(before);

    const report = await reconcile();
    expect(report.rows).toEqual([expect.objectContaining({ id: row().id, outcome: "recovered" })]);
    expect(row()).toMatchObject({ status: "settled", transaction: report.rows[0].transaction });
    expect(await usdcBalance(signer.address)).toBe(before - amount);

    // Every payment of this stack against the chain: all agree, nothing is left open.
    const all = await reconcile("--all", "--check");
    expect(all.outcomes.mismatch.count).toBe(0);
    expect(all.outcomes.open.count).toBe(0);
    expect(all.outcomes.agrees.count).toBeGreaterThan(2);
  });
});
