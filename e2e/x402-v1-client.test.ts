import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { createWalletClient, defineChain, http } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import axios from "axios";
import { withPaymentInterceptor } from "x402-axios";
import { decodeXPaymentResponse, wrapFetchWithPayment } from "x402-fetch";
import { chatBody, ledgerRow, polygon, postJson, quote, stack, usdcBalance } from "./support/payments";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[4]!;

/** The v1 client's wallet: a viem wallet on chain 137 (which x402 v1 calls `polygon`), over the embedded chain. */
function v1Wallet() {
  const chain = defineChain({
    id: polygon.chainId,
    name: "Polygon (embedded)",
    nativeCurrency: { name: "POL", symbol: "POL", decimals: 18 },
    rpcUrls: { default: { http: [stack().chainRpcUrl] } },
  });
  return createWalletClient({ account: privateKeyToAccount(payer().privateKey), chain, transport: http() });
}

/** `x402-fetch` 1.x as a caller would use it, remembering the X-PAYMENT headers it sends. */
function v1Fetch() {
  const sent: string[] = [];
  const recording: typeof fetch = async (input, init) => {
    const headers = (init?.headers ?? {}) as Record<string, string>;
    if (headers["X-PAYMENT"]) sent.push(headers["X-PAYMENT"]);
    return fetch(input, init);
  };
  return { fetch: wrapFetchWithPayment(recording, v1Wallet() as never), sent };
}

const post = (pay: (input: RequestInfo, init?: RequestInit) => Promise<Response>, body: unknown, path = PATH) =>
  pay(`${stack().appUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });

const decodeHeader = (header: string) =>
  JSON.parse(Buffer.from(header, "base64").toString("utf8")) as {
    x402Version: 1;
    scheme: string;
    network: string;
    payload: { signature: string; authorization: Record<string, string> };
  };
const encodeHeader = (payment: unknown) => Buffer.from(JSON.stringify(payment)).toString("base64");

describe("x402 v1 clients (x402-fetch 1.x)", () => {
  it("reads v1 requirements from the 402 body while PAYMENT-REQUIRED keeps the v2 document", async () => {
    const response = await postJson(PATH, chatBody("v1 quote"));
    expect(response.status).toBe(402);
    const body = await response.json();
    const v2 = await quote(PATH, chatBody("v1 quote"));
    expect(v2.x402Version).toBe(2);
    expect(body).toMatchObject({
      x402Version: 1,
      accepts: [
        {
          scheme: "exact",
          network: "polygon",
          maxAmountRequired: v2.accepts[0]!.amount,
          resource: `${stack().appUrl}${PATH}`,
          mimeType: "application/json",
          payTo: v2.accepts[0]!.payTo,
          maxTimeoutSeconds: v2.accepts[0]!.maxTimeoutSeconds,
          asset: v2.accepts[0]!.asset,
          extra: { name: "USD Coin", version: "2" },
        },
      ],
      extensions: { quote: v2.extensions!.quote },
      error: { code: "payment_required" },
    });
    expect(body.accepts[0].description).toBeTypeOf("string");
  });

  it("pays exactly the quote, settles once, and answers with X-PAYMENT-RESPONSE", async () => {
    const price = BigInt((await quote(PATH, chatBody("v1 pays"))).accepts[0]!.amount);
    const before = await usdcBalance(payer().address);
    const client = v1Fetch();
    const response = await post(client.fetch, chatBody("v1 pays"));
    expect(response.status).toBe(200);
    expect((await response.json()).choices[0].message.content).toBeTypeOf("string");
    const settlement = decodeXPaymentResponse(response.headers.get("x-payment-response")!);
    expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await usdcBalance(payer().address)).toBe(before - price);
    expect(client.sent).toHaveLength(1);
    const signature = client.sent[0]!;
    // The v1 payload names its authorization where v2 does: the ledger row is found the same way.
    expect(ledgerRow(signature)).toMatchObject({ amount: price.toString(), payment_signature: signature });
  });

  it("takes x402-axios's payment the same way (its own x402 library, 0.7)", async () => {
    const price = BigInt((await quote(PATH, chatBody("axios pays"))).accepts[0]!.amount);
    const before = await usdcBalance(payer().address);
    const client = withPaymentInterceptor(axios.create({ baseURL: stack().appUrl }), v1Wallet() as never);
    const response = await client.post(PATH, chatBody("axios pays"));
    expect(response.status).toBe(200);
    expect(response.data.choices[0].message.content).toBeTypeOf("string");
    const settlement = decodeXPaymentResponse(response.headers["x-payment-response"] as string);
    expect(settlement).toMatchObject({ success: true, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
    expect(await usdcBalance(payer().address)).toBe(before - price);
  });

  it("refuses a replay, the same authorization as v2, a tampered amount and a payment for another price", async () => {
    const client = v1Fetch();
    const paid = await post(client.fetch, chatBody("v1 once"));
    expect(paid.status).toBe(200);
    const signature = client.sent[0]!;
    const before = await usdcBalance(payer().address);
    const refusal = async (headers: Record<string, string>, body = chatBody("v1 once"), path = PATH) => {
      const response = await postJson(path, body, headers);
      expect(response.status).toBe(402);
      return (await response.json()).error as { code: string; message: string };
    };

    expect(await refusal({ "X-PAYMENT": signature })).toMatchObject({ code: "payment_already_used" });

    // One nonce space for both versions: the same authorization as a v2 payment is spent already.
    const signed = decodeHeader(signature);
    const v2 = await quote(PATH, chatBody("v1 once"));
    const asV2: PaymentPayload = {
      x402Version: 2,
      resource: v2.resource,
      accepted: v2.accepts[0]!,
      payload: signed.payload,
    };
    const reused = await refusal({ "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(asV2) });
    expect(reused.code).toBe("payment_already_used");

    const tampered = { ...signed, payload: { ...signed.payload, authorization: { ...signed.payload.authorization } } };
    tampered.payload.authorization.value = String(BigInt(signed.payload.authorization.value!) - 1n);
    expect(await refusal({ "X-PAYMENT": encodeHeader(tampered) })).toMatchObject({
      code: "payment_mismatch",
      message: expect.stringMatching(/amount/),
    });

    // A payment the client made for a request of another price (a longer answer), presented for this one.
    const other = v1Fetch();
    const costlier = { ...chatBody("v1 costlier"), max_tokens: 900 };
    expect((await post(other.fetch, costlier)).status).toBe(200);
    const forOther = decodeHeader(other.sent[0]!);
    forOther.payload.authorization.nonce = `0x${"ab".repeat(32)}`;
    expect(await refusal({ "X-PAYMENT": encodeHeader(forOther) })).toMatchObject({ code: "payment_mismatch" });

    expect(await refusal({ "X-PAYMENT": "not base64!" })).toMatchObject({ code: "payment_invalid" });
    expect(await usdcBalance(payer().address)).toBe(before - BigInt((await quote(PATH, costlier)).accepts[0]!.amount));
  });

  it("tells a v1 client clearly when the facilitator does not settle v1, and charges nothing", async () => {
    const proxy = await startFacilitatorProxy(stack().facilitatorUrl);
    proxy.setSupported((kind) => kind.x402Version === 2);
    const app = await startExtraApp({ FACILITATOR_URL: proxy.url });
    try {
      const before = await usdcBalance(payer().address);
      const client = v1Fetch();
      const response = await client.fetch(`${app.url}${PATH}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(chatBody("v1 without v1")),
      });
      expect(response.status).toBe(402);
      expect((await response.json()).error).toMatchObject({
        code: "payment_invalid",
        message: expect.stringMatching(/does not settle x402 v1 payments on polygon; pay with x402 v2/),
      });
      expect(await usdcBalance(payer().address)).toBe(before);
    } finally {
      await app.stop();
      await proxy.stop();
    }
  });
});
