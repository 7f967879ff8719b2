import { x402Client } from "@x402/core/client";
import { encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentRequirements } from "@x402/core/types";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import type { EvmNetwork } from "../../networks/network";
import { LocalSignatureCheck } from "./local-signature";
import { decodePaymentSignature, type DecodedPayment } from "./payment-signature";

const network = getNetwork("eip155:137") as EvmNetwork;
const payer = privateKeyToAccount(generatePrivateKey());
// No chain answers here: a contract wallet's signature then cannot be judged ("unknown").
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

/** A payment the official client signs for `terms` (ours by default), decoded as the app decodes it. */
async function signed(terms: PaymentRequirements = requirements, by = payer): Promise<DecodedPayment> {
  // Any asset: a payment in another token is one of the signatures this file refuses.
  const client = new x402Client().setSpendControls(false);
  const signer = toClientEvmSigner(by, createPublicClient({ transport: http("http://127.0.0.1:9") }));
  registerExactEvmScheme(client, { signer });
  const payload = await client.createPaymentPayload({
    x402Version: 2,
    resource: { url: "http://localhost/v1/chat/completions", description: "", mimeType: "application/json" },
    accepts: [terms],
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

  it("cannot judge a contract wallet's signature (not 65 bytes: ERC-1271, ERC-6492) while the chain is away", async () => {
    const payment = await signed();
    authorizationOf(payment).signature = `0x${"ab".repeat(200)}`;
    expect(await check.check(payment, requirements)).toBe("unknown");
    authorizationOf(payment).signature = `0x${"ab".repeat(100)}${"6492".repeat(16)}`;
    expect(await check.check(payment, requirements)).toBe("unknown");
  });
});

describe("junk, refused where it arrives", () => {
  // A chain of two JSON-RPC methods: eth_getCode, with code at the addresses in `contracts` only, and eth_call, as
  // ERC-6492's validator answers it: `vouches` says (0x01 or 0x00); each method's calls are counted.
  const contracts = new Set<string>();
  let vouches = false;
  const calls = { eth_getCode: 0, eth_call: 0 };
  const chain = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const call = JSON.parse(body) as { id: number; method: keyof typeof calls; params: string[] };
      calls[call.method]++;
      const code = contracts.has(String(call.params[0]).toLowerCase()) ? "0x6001" : "0x";
      const result = call.method === "eth_getCode" ? code : vouches ? "0x01" : "0x00";
      response.setHeader("content-type", "application/json");
      response.end(JSON.stringify({ jsonrpc: "2.0", id: call.id, result }));
    });
  });
  let withChain: LocalSignatureCheck;
  beforeAll(async () => {
    await new Promise<void>((resolve) => chain.listen(0, "127.0.0.1", resolve));
    withChain = new LocalSignatureCheck(network, `http://127.0.0.1:${(chain.address() as AddressInfo).port}`);
  });
  afterAll(() => new Promise<void>((resolve) => chain.close(() => resolve())));

  it("refuses the payer's own signature of other terms: another recipient, amount or token", async () => {
    const thief = privateKeyToAccount(generatePrivateKey()).address;
    expect(await withChain.check(await signed({ ...requirements, payTo: thief }), requirements)).toBe("forged");
    expect(await withChain.check(await signed({ ...requirements, amount: "1" }), requirements)).toBe("forged");
    const otherToken = { ...requirements, asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" };
    expect(await withChain.check(await signed(otherToken), requirements)).toBe("forged");
  });

  it("refuses another key's signature, unless the payer is a contract wallet that vouches for it", async () => {
    const payment = await signed();
    const forger = privateKeyToAccount(generatePrivateKey());
    authorizationOf(payment).signature = await forger.signMessage({ message: "not the payer" });
    expect(await withChain.check(payment, requirements)).toBe("forged");
    // Whether the payer has code is kept: the same junk again costs no chain call.
    const asked = { ...calls };
    expect(await withChain.check(payment, requirements)).toBe("forged");
    expect(calls).toEqual(asked);
    // Another payer, with code: a wallet whose owner's key is the forger's, say.
    const wallet = await signed(requirements, privateKeyToAccount(generatePrivateKey()));
    authorizationOf(wallet).signature = authorizationOf(payment).signature;
    contracts.add(wallet.payer);
    expect(await withChain.check(wallet, requirements)).toBe("forged");
    vouches = true;
    expect(await withChain.check(wallet, requirements)).toBe("valid");
    vouches = false;
  });

  it("refuses a signature that is not whole bytes, or not 65 bytes from a payer without code", async () => {
    const payment = await signed();
    authorizationOf(payment).signature = "0xabc";
    // No chain is asked: no contract wallet signs half a byte.
    expect(await check.check(payment, requirements)).toBe("forged");
    authorizationOf(payment).signature = `0x${"ab".repeat(200)}`;
    expect(await withChain.check(payment, requirements)).toBe("forged");
  });

  it("asks ERC-6492's validator of a wallet not deployed yet, and refuses what it does not vouch for", async () => {
    const payment = await signed();
    authorizationOf(payment).signature = `0x${"ab".repeat(100)}${"6492".repeat(16)}`;
    const asked = calls.eth_call;
    expect(await withChain.check(payment, requirements)).toBe("forged");
    expect(calls.eth_call).toBe(asked + 1);
    vouches = true;
    expect(await withChain.check(payment, requirements)).toBe("valid");
    vouches = false;
  });
});
