/**
 * The script of the page that cross-origin-page.ts serves, bundled for the browser at test time: what a web app on
 * another origin does with the API, through the official x402 client. It runs in Chromium, never in Node.
 */
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";

/** What the page saw of a paid chat completion: the 402 it read first, then the paid answer. */
export interface PaidChatReport {
  quote: { status: number; amount: string | undefined };
  paid: {
    status: number;
    settlement: { success: boolean; transaction: string; payer?: string } | undefined;
    serverTiming: string | null;
    content: string | undefined;
  };
}

/** A GET whose answer the page tries to read: its status, or fetch's error when CORS keeps it from the page. */
export type ReadReport = { status: number } | { error: string };

/** What the page read of a JSON POST: its status and body, or fetch's error when CORS refused it. */
export type PostReport = { status: number; body: unknown } | { error: string };

export interface CrossOriginPage {
  payChat(url: string, privateKey: `0x${string}`, body: unknown): Promise<PaidChatReport>;
  read(url: string): Promise<ReadReport>;
  post(url: string, headers: Record<string, string>, body: unknown): Promise<PostReport>;
}

const page: CrossOriginPage = {
  async payChat(url, privateKey, body) {
    const init = { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) };
    // The price, read as any page would before paying: PAYMENT-REQUIRED must be exposed to it.
    const quote = await fetch(url, init);
    const required = quote.headers.get("payment-required");
    await quote.text();
    // No public client: the exact scheme's EIP-3009 authorization is signed without reading the chain.
    const client = new x402Client();
    registerExactEvmScheme(client, { signer: toClientEvmSigner(privateKeyToAccount(privateKey)) });
    const response = await wrapFetchWithPayment(fetch, client)(url, init);
    const settlement = response.headers.get("payment-response");
    const completion = (await response.json()) as { choices?: { message?: { content?: string } }[] };
    return {
      quote: {
        status: quote.status,
        amount: required ? decodePaymentRequiredHeader(required).accepts[0]?.amount : undefined,
      },
      paid: {
        status: response.status,
        settlement: settlement ? decodePaymentResponseHeader(settlement) : undefined,
        serverTiming: response.headers.get("server-timing"),
        content: completion.choices?.[0]?.message?.content,
      },
    };
  },

  async post(url, headers, body) {
    try {
      const init = { method: "POST", headers: { "content-type": "application/json", ...headers } };
      const response = await fetch(url, { ...init, body: JSON.stringify(body) });
      return { status: response.status, body: await response.json() };
    } catch (error) {
      return { error: String(error) };
    }
  },

  async read(url) {
    try {
      const response = await fetch(url);
      await response.text();
      return { status: response.status };
    } catch (error) {
      return { error: String(error) };
    }
  },
};

(globalThis as unknown as { crossOriginPage: CrossOriginPage }).crossOriginPage = page;
