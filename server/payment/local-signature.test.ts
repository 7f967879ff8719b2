import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import type { EvmNetwork } from "../../networks/network";
import { LocalSignatureCheck } from "./local-signature";
import { decodePaymentSignature, type DecodedPayment } from "./payment-signature";

const network = getNetwork("eip155:137") as EvmNetwork;
const payer = privateKeyToAccount(generatePrivateKey());
// No chain answers here: a signature that is not the payer's key's is then left to the facilitator ("unchecked").
const check = new LocalSignatureCheck(network, "http://127.0.0.1:9");
const requirements: PaymentRequirements = {
  scheme: "exact",
  network: network.id,
  asset: network.usdc.address,
  amount: "1234",
  payTo: "0x2546BcD3c84621e976D8185a91A922aE77ECEc30",
  maxTimeoutSeconds: 300,
  extra: { ...network.usdc.eip712 },
};

/** A payment the official client signs for `requirements`, decoded as the app decodes it. */
async function signed(): Promise<DecodedPayment> {
  const client = new x402Client();
  const signer = toClientEvmSigner(payer, createPublicClient({ transport: http("http://127.0.0.1:9") }));
  registerExactEvmScheme(client, { signer });
  const payload = await client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://localhost/v1/chat/completions", description: "", mimeType: "application/json" },
    accepts: [requirements],
  });
  return decodePaymentSignature(encodePaymentSignatureHeader(payload), "evm");
}

const authorizationOf = (payment: DecodedPayment) =>
  payment.payload.payload as { authorization: Record<string, string>; signature: string };

describe("a payment's signature, checked where it was made", () => {
  it("is valid when the official client signed it with the payer's key", async () => {
    expect(await check.check(await signed(), requirements)).toBe("valid");
  });

  it("is not valid once a signed field was changed, nor for other terms than those signed", async () => {
    const payment = await signed();
    authorizationOf(payment).authorization.value = "1";
    expect(await check.check(payment, requirements)).not.toBe("valid");
    const other = { ...requirements, extra: { name: "USD Coin", version: "1" } };
    expect(await check.check(await signed(), other)).not.toBe("valid");
  });

  it("leaves a contract wallet's signature (not 65 bytes: ERC-1271, ERC-6492) to the facilitator", async () => {
    const payment = await signed();
    authorizationOf(payment).signature = `0x${"ab".repeat(200)}`;
    expect(await check.check(payment, requirements)).toBe("unchecked");
  });
});
