import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  decodePaymentSignatureHeader,
  encodePaymentRequiredHeader,
  encodePaymentResponseHeader,
} from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { afterEach, describe, expect, it } from "vitest";
import { loadMcpConfig } from "../../config/mcp-env";
import { PayingClient, PaymentRefused } from "./paying-client";

// Public keys and addresses of the test mnemonic; the recipient is the one the helper is told to pay.
const PAYER_KEY = "0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a";
const RECIPIENT = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";
const STRANGER = "0x000000000000000000000000000000000000dEaD";
const POLYGON_USDC = "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359";
const BASE_USDC = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913";

const checked: PaymentRequirements = {
  scheme: "exact",
  network: "eip155:137",
  amount: "1000",
  asset: POLYGON_USDC,
  payTo: RECIPIENT,
  maxTimeoutSeconds: 300,
  extra: { name: "USD Coin", version: "2" },
};
/** An entry the official client can pay, to someone else on another network, listed after the first. */
const other: PaymentRequirements = {
  ...checked,
  network: "eip155:8453",
  amount: "250000",
  asset: BASE_USDC,
  payTo: STRANGER,
};

/**
 * A third-party service that answers 402 with `accepts`, then 200 with a settlement to any signed retry, and keeps
 * every payment it was sent.
 */
async function fakeService(accepts: PaymentRequirements[]) {
  const signatures: PaymentPayload[] = [];
  const required: PaymentRequired = {
    x402Version: 2,
    resource: { url: "http://127.0.0.1/v1/chat/completions" },
    accepts,
  };
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      const signature = request.headers["payment-signature"];
      if (typeof signature !== "string") {
        response.writeHead(402, { "payment-required": encodePaymentRequiredHeader(required) }).end("{}");
        return;
      }
      const payload = decodePaymentSignatureHeader(signature);
      signatures.push(payload);
      const settlement = encodePaymentResponseHeader({
        success: true,
        transaction: `0x${"ab".repeat(32)}`,
        network: payload.accepted.network,
        payer: "0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC",
      });
      response.writeHead(200, { "content-type": "application/json", "payment-response": settlement });
      response.end(JSON.stringify({ choices: [{ message: { content: "ok" } }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new PayingClient(
    loadMcpConfig({
      PAYSVC_WALLET_PRIVATE_KEY: PAYER_KEY,
      PAYSVC_ORIGIN: origin,
      PAYSVC_PAY_TO: RECIPIENT,
      PAYSVC_MAX_PAYMENT_USD: "0.50",
    }),
  );
  return { client, signatures };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

describe("PayingClient", () => {
  it("signs nothing for another entry when the checked first entry cannot be paid", async () => {
    // The first entry passes every check but names a payment flow the official client does not know, so it
    // would skip it and pay the second: the Base USDC transfer to a stranger.
    const { client, signatures } = await fakeService([
      { ...checked, extra: { ...checked.extra, paymentFlow: "bogus" } },
      other,
    ]);
    const result = client.post("/v1/chat/completions", { model: "m", messages: [] });
    await expect(result).rejects.toThrow(PaymentRefused);
    await expect(result).rejects.toThrow(/nothing was paid/);
    expect(signatures).toEqual([]);
  });

  it("signs exactly the checked entry, and reports what it signed", async () => {
    const { client, signatures } = await fakeService([checked, other]);
    const answer = await client.post("/v1/chat/completions", { model: "m", messages: [] });
    expect(signatures.map((signature) => signature.accepted)).toEqual([checked]);
    expect(answer.paid).toEqual({
      amountUsd: "0.001000",
      amount: "1000",
      network: "eip155:137",
      payTo: RECIPIENT,
      transaction: `0x${"ab".repeat(32)}`,
    });
  });
});
