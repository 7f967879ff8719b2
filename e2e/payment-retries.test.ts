import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequired } from "@x402/core/types";
import { appendPaymentIdentifierToExtensions, generatePaymentId } from "@x402/extensions/payment-identifier";
import { describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { chatBody, paymentClient, postJson, quote, stack, usdcBalance } from "./support/payments";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[5]!;

/** A payment signed by the official client for `required`, carrying the payment-identifier `id`. */
async function paymentWithId(required: PaymentRequired, id: string): Promise<string> {
  const payload = await paymentClient(payer().privateKey).createPaymentPayload(structuredClone(required));
  appendPaymentIdentifierToExtensions(payload.extensions!, id);
  return encodePaymentSignatureHeader(payload);
}

async function send(body: unknown, signature: string, base = stack().appUrl) {
  const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, base);
  return { response, text: await response.text() };
}

describe("safe retries with the payment-identifier extension", () => {
  it("is declared in every 402, saying that streams are not replayed", async () => {
    const required = await quote(PATH, chatBody("declared"));
    expect(required.extensions?.["payment-identifier"]).toMatchObject({
      info: { required: false },
      schema: expect.objectContaining({ type: "object" }),
      description: expect.stringMatching(/Streamed answers are not kept/),
    });
  });

  it("answers a retry with the first answer, charged once, whether the payment is sent again or signed anew", async () => {
    const body = chatBody("retry me");
    const required = await quote(PATH, body);
    const price = BigInt(required.accepts[0]!.amount);
    const id = generatePaymentId("retry_");
    const before = await usdcBalance(payer().address);
    const signature = await paymentWithId(required, id);
    const first = await send(body, signature);
    expect(first.response.status).toBe(200);
    expect(await usdcBalance(payer().address)).toBe(before - price);

    // The connection dropped: the same request, the same payment.
    const again = await send(body, signature);
    expect(again.response.status).toBe(200);
    expect(again.text).toBe(first.text);
    expect(again.response.headers.get("payment-response")).toBe(first.response.headers.get("payment-response"));
    expect(again.response.headers.get("idempotent-replayed")).toBe("true");
    // Or a payment signed anew under the same id: verified, never settled.
    const resigned = await send(body, await paymentWithId(required, id));
    expect(resigned.response.status).toBe(200);
    expect(resigned.text).toBe(first.text);
    expect(await usdcBalance(payer().address)).toBe(before - price);

    // The same id for another request is refused; nothing is charged.
    const other = chatBody("another request");
    const conflict = await send(other, await paymentWithId(await quote(PATH, other), id));
    expect(conflict.response.status).toBe(409);
    expect(JSON.parse(conflict.text).error).toMatchObject({ code: "payment_identifier_conflict" });
    expect(await usdcBalance(payer().address)).toBe(before - price);
  });

  it("does not replay a stream, and refuses a malformed id", async () => {
    const body = { ...chatBody("stream me"), stream: true };
    const required = await quote(PATH, body);
    const signature = await paymentWithId(required, generatePaymentId("stream_"));
    const first = await send(body, signature);
    expect(first.response.status).toBe(200);
    expect(first.text).toMatch(/data: \[DONE\]/);
    const again = await send(body, signature);
    expect(again.response.status).toBe(402);
    expect(JSON.parse(again.text).error).toMatchObject({ code: "payment_already_used" });

    const payload = JSON.parse(
      Buffer.from(await paymentWithId(await quote(PATH, chatBody("bad id 2")), "y".repeat(16)), "base64").toString(),
    );
    payload.extensions["payment-identifier"].info.id = "short";
    const malformed = await send(chatBody("bad id 2"), Buffer.from(JSON.stringify(payload)).toString("base64"));
    expect(malformed.response.status).toBe(402);
    expect(JSON.parse(malformed.text).error).toMatchObject({
      code: "payment_invalid",
      message: expect.stringMatching(/^payment-identifier: /),
    });
  });

  it("keeps answers only for PAYMENT_ID_TTL_SECONDS", async () => {
    const app = await startExtraApp({ PAYMENT_ID_TTL_SECONDS: "1" });
    try {
      const body = chatBody("short-lived");
      const required = await quote(PATH, body, app.url);
      const signature = await paymentWithId(required, generatePaymentId("ttl_"));
      expect((await send(body, signature, app.url)).response.status).toBe(200);
      expect((await send(body, signature, app.url)).response.status).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 1_200));
      const expired = await send(body, signature, app.url);
      expect(expired.response.status).toBe(402);
      expect(JSON.parse(expired.text).error).toMatchObject({ code: "payment_already_used" });
    } finally {
      await app.stop();
    }
  });
});
