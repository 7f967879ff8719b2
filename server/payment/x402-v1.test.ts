import { describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { MalformedPaymentError } from "./payment-signature";
import { decodeRecordedPayment, decodeV1Payment, v1Mismatch, v1Requirements } from "./x402-v1";

const polygon = getNetwork("eip155:137");
const authorization = {
  from: "0x90F79bf6EB2c4f870365E785982E1f101E93b906",
  to: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
  value: "1023",
  validAfter: "0",
  validBefore: "9999999999",
  nonce: `0x${"AB".repeat(32)}`,
};
const header = (payment: unknown) => Buffer.from(JSON.stringify(payment)).toString("base64");
const v1Header = (overrides: Record<string, unknown> = {}) =>
  header({
    x402Version: 1,
    scheme: "exact",
    network: "polygon",
    payload: { signature: "0x1234", authorization },
    ...overrides,
  });

describe("x402 v1 payments", () => {
  const requirements = v1Requirements(
    {
      scheme: "exact",
      network: "eip155:137",
      amount: "1023",
      asset: polygon.usdc.address,
      payTo: authorization.to,
      maxTimeoutSeconds: 300,
      extra: { name: "USD Coin", version: "2" },
    },
    "polygon",
    { url: "http://service.test/v1/chat/completions", description: "a chat" },
  );

  it("decodes X-PAYMENT into the ledger's terms: the authorization's nonce and payer, lower-cased", () => {
    const payment = decodeV1Payment(v1Header(), polygon);
    expect(payment).toMatchObject({
      version: 1,
      nonce: `0x${"ab".repeat(32)}`,
      payer: authorization.from.toLowerCase(),
      asset: polygon.usdc.address,
      payTo: authorization.to,
    });
    expect(v1Mismatch(payment, requirements)).toBeUndefined();
    expect(decodeRecordedPayment(v1Header(), polygon)).toEqual(payment);
  });

  it("names what does not match: network, pay-to, amount", () => {
    const mismatch = (overrides: Record<string, unknown>) =>
      v1Mismatch(decodeV1Payment(v1Header(overrides), polygon), requirements);
    expect(mismatch({ network: "base" })).toBe("Payment is for network base, expected polygon");
    const to = { ...authorization, to: "0x0000000000000000000000000000000000000001" };
    expect(mismatch({ payload: { signature: "0x12", authorization: to } })).toMatch(/^Payment is to 0x0+1, expected/);
    const value = { ...authorization, value: "1022" };
    expect(mismatch({ payload: { signature: "0x12", authorization: value } })).toBe(
      "Payment amount is 1022, expected exactly 1023",
    );
  });

  it("refuses a malformed payload, and v1 on networks without a v1 name", () => {
    expect(() => decodeV1Payment("%%%", polygon)).toThrow("X-PAYMENT is not base64");
    expect(() => decodeV1Payment(v1Header({ x402Version: 2 }), polygon)).toThrow(/x402Version must be 1/);
    expect(() =>
      decodeV1Payment(header({ x402Version: 1, scheme: "exact", network: "polygon", payload: {} }), polygon),
    ).toThrow(MalformedPaymentError);
    for (const id of ["eip155:5042", "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"]) {
      expect(() => decodeV1Payment(v1Header(), getNetwork(id))).toThrow(/are not accepted on .*; pay with x402 v2/);
    }
  });
});
