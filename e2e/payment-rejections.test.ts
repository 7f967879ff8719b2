import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  balances,
  chatBody,
  craftedPayment,
  ledgerRow,
  officialPayment,
  postJson,
  quote,
  stack,
} from "./support/payments";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[1]!;
const payerAccount = () => privateKeyToAccount(payer().privateKey);

/** Sends a paid request and expects a 402 with the given error code. */
async function expectRejected(body: unknown, signature: string, code: string, path = PATH) {
  const response = await postJson(path, body, { "PAYMENT-SIGNATURE": signature });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBe(402);
  expect(json.error.code).toBe(code);
  // The header is x402's v2 document with its `error` string; the body (on Polygon) is the same terms as x402 v1's
  // document, for v1 clients, with OpenAI's error object and the quote's breakdown (the other extensions are the
  // header's alone).
  const challenge = decodePaymentRequiredHeader(response.headers.get("payment-required")!);
  expect(challenge.error).toBe(json.error.message);
  expect(json).toMatchObject({ x402Version: 1, extensions: { quote: challenge.extensions?.quote } });
  expect(Object.keys(json.extensions)).toEqual(["quote"]);
  // x402 v1 has only exact: an upto entry of the header has no v1 form.
  expect(json.accepts).toEqual(
    challenge.accepts
      .filter((accepted) => accepted.scheme === "exact")
      .map((accepted) =>
        expect.objectContaining({
          network: "polygon",
          maxAmountRequired: accepted.amount,
          payTo: accepted.payTo,
          asset: accepted.asset,
          resource: challenge.resource.url,
        }),
      ),
  );
  expect(response.headers.get("payment-response")).toBeNull();
  return json as { error: { message: string } };
}

describe("payments that must be rejected with 402 and settle nothing", () => {
  let before: { payer: bigint; payTo: bigint };
  beforeEach(async () => {
    before = await balances(payer().address);
  });
  afterEach(async () => {
    expect(await balances(payer().address)).toEqual(before);
  });

  it("a payment for another amount (signed for a cheaper body)", async () => {
    const cheap = chatBody("cheap", { max_tokens: 1 });
    const dear = chatBody("dear", { max_tokens: 5000 });
    const signature = await officialPayment(payer().privateKey, await quote(PATH, cheap));
    const json = await expectRejected(dear, signature, "payment_mismatch");
    expect(json.error.message).toMatch(/amount/);
  });

  it("a payment for another network", async () => {
    const body = chatBody("network");
    const required = await quote(PATH, body);
    const requirements = { ...required.accepts[0]!, network: "eip155:8453" as const };
    const signature = await craftedPayment({
      signer: payerAccount(),
      paymentRequired: required,
      requirements,
      chainId: 8453,
    });
    const json = await expectRejected(body, signature, "payment_mismatch");
    expect(json.error.message).toMatch(/network/);
  });

  it("a payment to another recipient", async () => {
    const body = chatBody("recipient");
    const required = await quote(PATH, body);
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    const requirements = { ...required.accepts[0]!, payTo: thief };
    const signature = await craftedPayment({ signer: payerAccount(), paymentRequired: required, requirements });
    const json = await expectRejected(body, signature, "payment_mismatch");
    expect(json.error.message).toMatch(/payTo/);
  });

  it("a payment whose authorization pays someone else than the requirements it claims", async () => {
    const body = chatBody("authorization recipient");
    const required = await quote(PATH, body);
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    const signature = await craftedPayment({
      signer: payerAccount(),
      paymentRequired: required,
      authorization: { to: thief },
    });
    await expectRejected(body, signature, "payment_rejected");
  });

  it("a payment in another asset", async () => {
    const body = chatBody("asset");
    const required = await quote(PATH, body);
    const requirements = { ...required.accepts[0]!, asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" };
    const signature = await craftedPayment({ signer: payerAccount(), paymentRequired: required, requirements });
    const json = await expectRejected(body, signature, "payment_mismatch");
    expect(json.error.message).toMatch(/asset/);
  });

  it("a payment made for another resource", async () => {
    const body = chatBody("resource");
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const json = await expectRejected(body, signature, "payment_mismatch", "/api/v1/chat/completions");
    expect(json.error.message).toMatch(/\/v1\/chat\/completions/);
  });

  it("an expired authorization", async () => {
    const body = chatBody("expired");
    const required = await quote(PATH, body);
    const past = String(Math.floor(Date.now() / 1000) - 60);
    const signature = await craftedPayment({
      signer: payerAccount(),
      paymentRequired: required,
      authorization: { validBefore: past },
    });
    const json = await expectRejected(body, signature, "payment_rejected");
    expect(json.error.message).toMatch(/valid_before|expired/i);
  });

  it("malformed base64 and malformed JSON", async () => {
    const body = chatBody("malformed");
    await expectRejected(body, "not base64 at all!!", "payment_invalid");
    await expectRejected(body, Buffer.from("{not json").toString("base64"), "payment_invalid");
    await expectRejected(body, Buffer.from(JSON.stringify({ x402Version: 2 })).toString("base64"), "payment_invalid");
    const v1 = encodePaymentSignatureHeader({ x402Version: 1 } as never);
    await expectRejected(body, v1, "payment_invalid");
  });

  it("a forged signature (signed by another key, claiming the payer)", async () => {
    const body = chatBody("forged");
    const required = await quote(PATH, body);
    const forger = privateKeyToAccount(generatePrivateKey());
    const signature = await craftedPayment({
      signer: forger,
      paymentRequired: required,
      authorization: { from: payer().address },
    });
    const json = await expectRejected(body, signature, "payment_rejected");
    expect(json.error.message).toMatch(/signature/i);
  });

  it("a payer without funds", async () => {
    const body = chatBody("broke");
    const broke = generatePrivateKey();
    const signature = await officialPayment(broke, await quote(PATH, body));
    const json = await expectRejected(body, signature, "payment_rejected");
    expect(json.error.message).toMatch(/insufficient/i);
    expect(ledgerRow(signature)).toMatchObject({
      status: "failed",
      failure_reason: expect.stringMatching(/insufficient/),
    });
  });
});

describe("a payment signature is used once", () => {
  it("is refused the second time, sequentially", async () => {
    const body = chatBody("replay me");
    const price = BigInt((await quote(PATH, body)).accepts[0]!.amount);
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const before = await balances(payer().address);
    const first = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature });
    expect(first.status).toBe(200);
    await first.json();
    await expectRejected(body, signature, "payment_already_used");
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
    // A whole answer's settlement is recorded right after the answer leaves.
    await expect.poll(() => ledgerRow(signature)?.status).toBe("settled");
    const row = ledgerRow(signature);
    expect(row).toMatchObject({ status: "settled", amount: price.toString(), payer: payer().address.toLowerCase() });
    expect(row?.transaction).toMatch(/^0x[0-9a-f]{64}$/);
  });

  it("is refused for one of two requests that carry it at the same moment", async () => {
    const body = chatBody("race me");
    const price = BigInt((await quote(PATH, body)).accepts[0]!.amount);
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const before = await balances(payer().address);
    const responses = await Promise.all(
      Array.from({ length: 4 }, () => postJson(PATH, body, { "PAYMENT-SIGNATURE": signature })),
    );
    const statuses = responses.map((response) => response.status).sort();
    expect(statuses).toEqual([200, 402, 402, 402]);
    for (const response of responses) {
      const json = await response.json();
      if (response.status === 402) expect(json.error.code).toBe("payment_already_used");
    }
    const after = await balances(payer().address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
  });
});
