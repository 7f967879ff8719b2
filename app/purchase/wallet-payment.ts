/**
 * A prepaid pack bought the way agents pay: the official x402 client (`@x402/fetch` over `@x402/core` with the
 * `exact` EVM scheme of `@x402/evm`), with the visitor's browser wallet as its signer. The wallet signs one EIP-712
 * message (an EIP-3009 USDC transfer authorization), so the payer needs no gas; the service collects it only when
 * the key is issued.
 */
import { x402Client, type PaymentPolicy } from "@x402/core/client";
import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements } from "@x402/core/types";
import type { ClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { createWalletClient, custom, decodeFunctionResult, encodeFunctionData, erc20Abi } from "viem";
import type { EvmPurchaseNetwork } from "../../server/console/wallet-purchase";
import { messageOf, walletErrorCode, WalletErrorCode, type Eip1193Provider } from "./browser-wallet";

/** A pack to buy, or (with `key`, one of the payer's keys) tokens to add to a key. */
export interface PackRequest {
  model: string;
  tokens: number;
  key?: number;
}

/** The price the service asked, from its 402: the requirement to sign, and the breakdown it shows. */
export interface PackQuote {
  requirement: PaymentRequirements;
  amount: bigint;
  breakdown: { tokensUsd?: string; settlementFeeUsd?: string };
}

/** The body of a 201 from /prepaid/codes. */
export interface PrepaidCode {
  code: string;
  model: string;
  tokens: { total: number; remaining: number };
  api_base: string;
  status_url: string;
}

export type QuoteAnswer =
  | { kind: "quote"; quote: PackQuote }
  | { kind: "refused"; status: number; message: string | undefined }
  | { kind: "unreachable" };

const jsonPost = (body: PackRequest): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
  credentials: "omit",
  cache: "no-store",
});

/** The error message of a JSON answer in OpenAI's shape, if it has one. */
async function errorMessageOf(response: Response): Promise<string | undefined> {
  const json = (await response.json().catch(() => undefined)) as { error?: { message?: unknown } } | undefined;
  return typeof json?.error?.message === "string" ? json.error.message : undefined;
}

/** Asks the price: the purchase without payment, answered 402 with the exact amount in PAYMENT-REQUIRED. */
export async function quotePack(path: string, pack: PackRequest, network: EvmPurchaseNetwork): Promise<QuoteAnswer> {
  let response: Response;
  try {
    response = await fetch(path, jsonPost(pack));
  } catch {
    return { kind: "unreachable" };
  }
  const header = response.headers.get("payment-required");
  if (response.status !== 402 || !header) {
    return { kind: "refused", status: response.status, message: await errorMessageOf(response) };
  }
  await response.body?.cancel();
  const required: PaymentRequired = decodePaymentRequiredHeader(header);
  const requirement = required.accepts.find((entry) => entry.scheme === "exact" && entry.network === network.id);
  if (!requirement) {
    return { kind: "refused", status: 402, message: `the service offers no exact payment on ${network.id}` };
  }
  const display = (required.extensions?.quote ?? {}) as { tokens_usd?: unknown; settlement_fee_usd?: unknown };
  return {
    kind: "quote",
    quote: {
      requirement,
      amount: BigInt(requirement.amount),
      breakdown: {
        tokensUsd: typeof display.tokens_usd === "string" ? display.tokens_usd : undefined,
        settlementFeeUsd: typeof display.settlement_fee_usd === "string" ? display.settlement_fee_usd : undefined,
      },
    },
  };
}

/** The account's USDC, read through the wallet (eth_call of balanceOf on the chain it is on). */
export async function usdcBalanceOf(
  provider: Eip1193Provider,
  network: EvmPurchaseNetwork,
  account: `0x${string}`,
): Promise<bigint> {
  const data = encodeFunctionData({ abi: erc20Abi, functionName: "balanceOf", args: [account] });
  const answer = await provider.request({ method: "eth_call", params: [{ to: network.usdc.address, data }, "latest"] });
  return decodeFunctionResult({ abi: erc20Abi, functionName: "balanceOf", data: answer as `0x${string}` });
}

/** What paying for a pack came to; `answer` is the service's (a new key's code, or a key topped up). */
export type PurchaseOutcome<Answer = PrepaidCode> =
  | { kind: "bought"; answer: Answer; transaction: string | undefined }
  /** The wallet said no to the signature. */
  | { kind: "rejected" }
  /** The wallet could not sign (its own words). */
  | { kind: "signing-failed"; message: string }
  /** The 402 the client paid asked for something else than the price shown: nothing was signed. */
  | { kind: "price-changed" }
  /** A 402 to the signed payment: refused by the service or its facilitator; nothing was collected. */
  | { kind: "payment-refused"; message: string | undefined }
  /** Another answer to the signed payment (the issuer unavailable, ...): nothing was collected. */
  | { kind: "failed"; status: number; message: string | undefined }
  | { kind: "unreachable"; afterSigning: boolean };

/**
 * Buys the pack with the official client, the wallet signing. Only the requirement the person saw is paid: a policy
 * keeps the client from signing any other, and the spend control caps it at that amount.
 */
export async function buyPack<Answer = PrepaidCode>(
  path: string,
  pack: PackRequest,
  confirmed: PaymentRequirements,
  provider: Eip1193Provider,
  account: `0x${string}`,
): Promise<PurchaseOutcome<Answer>> {
  const events = { signing: false, signed: false, signingError: undefined as unknown, priceChanged: false };
  const wallet = createWalletClient({ account, transport: custom(provider) });
  const signer: ClientEvmSigner = {
    address: account,
    async signTypedData(typedData) {
      events.signing = true;
      try {
        // viem sends eth_signTypedData_v4 to the wallet, with the EIP712Domain type and bigints as decimal strings.
        const signature = await wallet.signTypedData(typedData as Parameters<typeof wallet.signTypedData>[0]);
        events.signed = true;
        return signature;
      } catch (error) {
        events.signingError = error;
        throw error;
      }
    },
  };
  const sameAsConfirmed: PaymentPolicy = (_version, offered) => {
    const kept = offered.filter(
      (entry) =>
        entry.scheme === "exact" &&
        entry.network === confirmed.network &&
        entry.amount === confirmed.amount &&
        entry.asset.toLowerCase() === confirmed.asset.toLowerCase() &&
        entry.payTo.toLowerCase() === confirmed.payTo.toLowerCase(),
    );
    if (kept.length === 0) events.priceChanged = true;
    return kept;
  };
  const client = new x402Client();
  registerExactEvmScheme(client, { signer, networks: [confirmed.network as `${string}:${string}`] });
  client.registerPolicy(sameAsConfirmed);
  // The price shown is the cap, whatever the client's default ($1) and asset table (a local or configured USDC).
  client.setSpendControls({
    allowedAssets: [
      {
        network: confirmed.network as `${string}:${string}`,
        asset: confirmed.asset,
        maxAmountPerPayment: confirmed.amount,
      },
    ],
  });
  const paidFetch = wrapFetchWithPayment((input, init) => fetch(input, init), client);

  let response: Response;
  try {
    response = await paidFetch(path, jsonPost(pack));
  } catch (error) {
    if (events.signingError !== undefined) {
      return walletErrorCode(events.signingError) === WalletErrorCode.userRejected
        ? { kind: "rejected" }
        : { kind: "signing-failed", message: messageOf(events.signingError) };
    }
    if (events.priceChanged) return { kind: "price-changed" };
    if (error instanceof TypeError) return { kind: "unreachable", afterSigning: events.signed };
    return { kind: "signing-failed", message: error instanceof Error ? error.message : String(error) };
  }
  // 201: a key issued; 200: a key topped up.
  if (response.status === 201 || response.status === 200) {
    const settlement = response.headers.get("payment-response");
    return {
      kind: "bought",
      answer: (await response.json()) as Answer,
      transaction: settlement ? decodePaymentResponseHeader(settlement).transaction : undefined,
    };
  }
  const message = await errorMessageOf(response);
  if (response.status === 402) return { kind: "payment-refused", message };
  return { kind: "failed", status: response.status, message };
}
