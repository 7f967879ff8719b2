import { x402Client } from "@x402/core/client";
import {
  decodePaymentRequiredHeader,
  decodePaymentResponseHeader,
  encodePaymentSignatureHeader,
} from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { createKeyPairSignerFromBytes, getBase58Encoder } from "@solana/kit";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { ExactSvmScheme } from "@x402/svm/exact/client";
import { privateKeyToAccount } from "viem/accounts";
import type { McpConfig } from "../../config/mcp-env";
import { getNetwork, networkIds, sameAddress } from "../../networks";
import { atomicToDecimal, decimalToAtomic } from "../../server/core/money";

/** The fields that decide who is paid, where, in what and how much. */
const sameTerms = (a: PaymentRequirements, b: PaymentRequirements) =>
  a.scheme === b.scheme &&
  a.network === b.network &&
  a.payTo === b.payTo &&
  a.asset === b.asset &&
  a.amount === b.amount;

export interface PaidAnswer {
  body: unknown;
  paid?: { amountUsd: string; amount: string; network: string; payTo: string; transaction: string };
}

/** A refusal to pay, or a paid call that failed: reported to the agent as a tool error. */
export class PaymentRefused extends Error {}

/**
 * Calls paid endpoints of one deployment for an agent, within its owner's limits: it pays only the configured
 * recipient, on the deployment's network, in that network's USDC, and never more than the maximum per request.
 */
export class PayingClient {
  private readonly client = new x402Client();
  /** The wallet's scheme, registered once; a Solana keypair is imported asynchronously. */
  private readonly walletReady: Promise<void>;

  constructor(private readonly config: McpConfig) {
    this.walletReady = this.registerWallet();
    this.walletReady.catch(() => undefined); // reported by the first payment that needs it
  }

  private async registerWallet(): Promise<void> {
    const { wallet } = this.config;
    if (wallet.kind === "evm") {
      registerExactEvmScheme(this.client, { signer: toClientEvmSigner(privateKeyToAccount(wallet.privateKey)) });
      return;
    }
    const signer = await createKeyPairSignerFromBytes(getBase58Encoder().encode(wallet.keypair));
    this.client.register("solana:*", new ExactSvmScheme(signer, { rpcUrl: wallet.rpcUrl }));
  }

  async getJson(path: string): Promise<unknown> {
    const response = await fetch(`${this.config.origin}${path}`, { signal: AbortSignal.timeout(30_000) });
    if (!response.ok) throw new PaymentRefused(`${path} answered ${response.status}`);
    return response.json();
  }

  /** Checks a 402's terms against the owner's limits; returns why it must not be paid, if so. */
  private refusal(required: PaymentRequired): string | undefined {
    if (required.x402Version !== 2)
      return `the service speaks x402 version ${required.x402Version}; this helper pays version 2 only`;
    const terms = required.accepts[0];
    if (!terms) return "the service offered no payment terms";
    if (!(networkIds as string[]).includes(terms.network))
      return `the service asks for payment on ${terms.network}, a network this helper does not pay on`;
    const network = getNetwork(terms.network);
    if (network.kind !== this.config.wallet.kind) {
      return `the service asks for payment on ${terms.network}, and the configured wallet key is for ${this.config.wallet.kind === "evm" ? "EVM networks" : "Solana"}; nothing was paid`;
    }
    const expectedPayTo = this.config.payToFor(terms.network);
    if (!expectedPayTo) return `no recipient is configured for ${terms.network} (PAYSVC_PAY_TO_BY_NETWORK)`;
    if (!sameAddress(terms.payTo, expectedPayTo)) {
      return `the service asks to pay ${terms.payTo}, not the configured recipient ${expectedPayTo}; nothing was paid`;
    }
    if (!network.usdc.addressFromConfiguration && !sameAddress(terms.asset, network.usdc.address)) {
      return `the service asks for asset ${terms.asset}, not USDC on ${terms.network}; nothing was paid`;
    }
    const limit = decimalToAtomic(this.config.maxPaymentUsd, network.usdc.decimals);
    if (BigInt(terms.amount) > limit) {
      return `the quote is ${atomicToDecimal(BigInt(terms.amount), network.usdc.decimals)} USD, above the limit of ${this.config.maxPaymentUsd} USD per request; nothing was paid`;
    }
    return undefined;
  }

  /** POSTs `body`; when the answer is 402, pays it if the terms are within limits, and repeats the request. */
  async post(path: string, body: unknown): Promise<PaidAnswer> {
    const send = (headers: Record<string, string> = {}) =>
      fetch(`${this.config.origin}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json", ...headers },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(300_000),
      });
    const first = await send();
    if (first.status !== 402) return { body: await this.answerOf(first) };
    const header = first.headers.get("payment-required");
    await first.body?.cancel();
    if (!header) throw new PaymentRefused("the service answered 402 without PAYMENT-REQUIRED");
    const required = decodePaymentRequiredHeader(header);
    const reason = this.refusal(required);
    if (reason) throw new PaymentRefused(reason);
    const terms = required.accepts[0]!;
    // Our own checks above are the policy; the official client's spend controls are aligned with them.
    this.client.setSpendControls({
      maxAmountPerPayment: `$${this.config.maxPaymentUsd}`,
      allowedAssets: [
        { network: terms.network as `${string}:${string}`, asset: terms.asset, maxAmountPerPayment: terms.amount },
      ],
    });
    try {
      await this.walletReady;
    } catch (error) {
      throw new PaymentRefused(`the wallet key cannot be used: ${(error as Error).message}; nothing was paid`);
    }
    // Only the checked entry is offered for signing: given the whole 402, the official client picks an entry of its
    // own (it skips those it cannot use), which may name another recipient, network or amount than the one checked.
    let payload;
    try {
      payload = await this.client.createPaymentPayload({ ...required, accepts: [terms] });
    } catch (error) {
      throw new PaymentRefused(
        `no payment could be signed for these terms: ${(error as Error).message}; nothing was paid`,
      );
    }
    const signed = payload.accepted;
    if (!signed || !sameTerms(signed, terms)) {
      throw new PaymentRefused("the x402 client signed other terms than the ones checked; nothing was paid");
    }
    const paid = await send({ "PAYMENT-SIGNATURE": encodePaymentSignatureHeader(payload) });
    const answer = await this.answerOf(paid);
    const settlementHeader = paid.headers.get("payment-response");
    const settlement = settlementHeader ? decodePaymentResponseHeader(settlementHeader) : undefined;
    const decimals = getNetwork(signed.network).usdc.decimals;
    return {
      body: answer,
      paid: settlement?.success
        ? {
            amountUsd: atomicToDecimal(BigInt(signed.amount), decimals),
            amount: signed.amount,
            network: signed.network,
            payTo: signed.payTo,
            transaction: settlement.transaction,
          }
        : undefined,
    };
  }

  private async answerOf(response: Response): Promise<unknown> {
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: keep the text
    }
    if (!response.ok) {
      const message = (body as { error?: { message?: string } })?.error?.message ?? text.slice(0, 300);
      throw new PaymentRefused(`the service answered ${response.status}: ${message}`);
    }
    return body;
  }
}
