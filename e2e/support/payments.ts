import { randomBytes } from "node:crypto";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from "@x402/core/types";
import { authorizationTypes, toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { UptoEvmScheme } from "@x402/evm/upto/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { createPublicClient, getAddress, http, type Abi } from "viem";
import { privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { inject } from "vitest";
import { localUsdcAbi } from "../../cli/dev-stack/local-chain";
import { getNetwork, type EvmNetwork } from "../../networks";

/**
 * The shared stack of the worker running this file (VITEST_POOL_ID counts workers from 1): files on one worker run
 * one at a time, so a file has its stack to itself while it runs, as when every file ran alone on one stack.
 */
export const stack = () => {
  const stacks = inject("stacks");
  const worker = Number(process.env.VITEST_POOL_ID ?? 1);
  const shared = stacks[worker - 1];
  if (!shared) throw new Error(`no shared stack for vitest worker ${worker} of ${stacks.length}`);
  return shared;
};

/** Every worker's shared stack, for the ledger check that runs after all the journeys. */
export const allStacks = () => inject("stacks");

/**
 * The stack's facilitator as the app is given it: its URL and the credentials it serves only its own app with.
 * For a process of the same deployment (another app, `paysvc start`, `paysvc ledger reconcile`).
 */
export const stackFacilitator = (shared = stack()) => ({
  FACILITATOR_URL: shared.facilitatorUrl,
  FACILITATOR_AUTH_HEADER: shared.facilitatorAuthHeader,
});
export const polygon = getNetwork("eip155:137") as EvmNetwork;

/** The official x402 client for a payer key, the way a caller would build it. */
export function paymentClient(privateKey: `0x${string}`): x402Client {
  const account = privateKeyToAccount(privateKey);
  const publicClient = createPublicClient({ transport: http(stack().chainRpcUrl) });
  const client = new x402Client();
  registerExactEvmScheme(client, { signer: toClientEvmSigner(account, publicClient) });
  return client;
}

/** The official x402 client preferring `upto` where a 402 offers it (@x402/evm/upto/client), `exact` otherwise. */
export function uptoPaymentClient(privateKey: `0x${string}`): x402Client {
  const account = privateKeyToAccount(privateKey);
  // Its public client reads the payer's Permit2 allowance: without one, it signs an EIP-2612 permit too.
  const signer = toClientEvmSigner(account, createPublicClient({ transport: http(stack().chainRpcUrl) }));
  const client = new x402Client((_version, accepts) => accepts.find((entry) => entry.scheme === "upto") ?? accepts[0]!);
  // Under the pattern registerExactEvmScheme uses (eip155:*): the client looks a scheme up under the most specific
  // network it has, so upto under eip155:137 alone would hide exact there.
  client.register("eip155:*", new UptoEvmScheme(signer));
  registerExactEvmScheme(client, { signer });
  client.setSpendControls({ maxAmountPerPayment: "$5" });
  return client;
}

/** The official openai SDK paying through the official x402 fetch wrapper. */
export function payingOpenAI(privateKey: `0x${string}`, baseURL = `${stack().appUrl}/v1`): OpenAI {
  return new OpenAI({
    apiKey: "x402-no-key-needed",
    baseURL,
    fetch: wrapFetchWithPayment(fetch, paymentClient(privateKey)),
    maxRetries: 0,
  });
}

/** The USDC balance of `address` on the chain of this worker's stack, or of the one at `chainRpcUrl`. */
export async function usdcBalance(address: `0x${string}`, chainRpcUrl = stack().chainRpcUrl): Promise<bigint> {
  const client = createPublicClient({ transport: http(chainRpcUrl) });
  return (await client.readContract({
    address: polygon.usdc.address,
    abi: localUsdcAbi as Abi,
    functionName: "balanceOf",
    args: [address],
  })) as bigint;
}

/** Balances of the payer and the pay-to, to compare before and after. */
export async function balances(payer: `0x${string}`): Promise<{ payer: bigint; payTo: bigint }> {
  const [payerBalance, payToBalance] = await Promise.all([usdcBalance(payer), usdcBalance(stack().payTo)]);
  return { payer: payerBalance, payTo: payToBalance };
}

export function postJson(path: string, body: unknown, headers: Record<string, string> = {}, base = stack().appUrl) {
  return fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Asks for the price of a request: the 402 and its decoded PAYMENT-REQUIRED header. */
export async function quote(path: string, body: unknown, base = stack().appUrl): Promise<PaymentRequired> {
  const response = await postJson(path, body, {}, base);
  if (response.status !== 402) throw new Error(`expected 402, got ${response.status}: ${await response.text()}`);
  const header = response.headers.get("payment-required");
  if (!header) throw new Error("402 without PAYMENT-REQUIRED");
  await response.body?.cancel();
  return decodePaymentRequiredHeader(header);
}

/** A payment signed by the official client for the given 402 answer. */
export async function officialPayment(privateKey: `0x${string}`, paymentRequired: PaymentRequired): Promise<string> {
  const payload = await paymentClient(privateKey).createPaymentPayload(paymentRequired);
  return encodePaymentSignatureHeader(payload);
}

/**
 * A hand-built EIP-3009 payment, for payments the official client refuses to make (expired, forged, altered).
 * `signer` signs; `overrides` change the authorization after the requirements were copied into it.
 */
export async function craftedPayment(options: {
  signer: PrivateKeyAccount;
  paymentRequired: PaymentRequired;
  requirements?: PaymentRequirements;
  authorization?: Partial<{
    from: `0x${string}`;
    to: `0x${string}`;
    value: string;
    validAfter: string;
    validBefore: string;
  }>;
  chainId?: number;
}): Promise<string> {
  const requirements = options.requirements ?? (options.paymentRequired.accepts[0] as PaymentRequirements);
  const now = Math.floor(Date.now() / 1000);
  const authorization = {
    from: options.signer.address,
    to: getAddress(requirements.payTo),
    value: requirements.amount,
    validAfter: String(now - 600),
    validBefore: String(now + requirements.maxTimeoutSeconds),
    nonce: `0x${randomBytes(32).toString("hex")}` as `0x${string}`,
    ...options.authorization,
  };
  const signature = await options.signer.signTypedData({
    domain: {
      name: requirements.extra.name as string,
      version: requirements.extra.version as string,
      chainId: options.chainId ?? polygon.chainId,
      verifyingContract: getAddress(requirements.asset),
    },
    types: authorizationTypes,
    primaryType: "TransferWithAuthorization",
    message: {
      from: getAddress(authorization.from),
      to: getAddress(authorization.to),
      value: BigInt(authorization.value),
      validAfter: BigInt(authorization.validAfter),
      validBefore: BigInt(authorization.validBefore),
      nonce: authorization.nonce,
    },
  });
  const payload: PaymentPayload = {
    x402Version: 2,
    resource: options.paymentRequired.resource,
    accepted: requirements,
    payload: { authorization, signature },
  };
  return encodePaymentSignatureHeader(payload);
}

export function chatBody(content: string, extra: Record<string, unknown> = {}) {
  return { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content }], max_tokens: 64, ...extra };
}

/**
 * The payments-ledger row of a signed payment, read from the service's real SQLite file: by its EIP-3009 nonce
 * (`exact`), or by its payer and Permit2 nonce (`upto`).
 */
export function ledgerRow(signature: string): Record<string, unknown> | undefined {
  const { payload } = JSON.parse(Buffer.from(signature, "base64").toString("utf8")) as {
    payload: { authorization?: { nonce: string }; permit2Authorization?: { from: string; nonce: string } };
  };
  const permit2 = payload.permit2Authorization;
  const nonce = permit2
    ? `permit2:${permit2.from.toLowerCase()}:${BigInt(permit2.nonce)}`
    : payload.authorization!.nonce.toLowerCase();
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database.prepare("select * from payments where nonce = ?").get(nonce) as Record<string, unknown> | undefined;
  } finally {
    database.close();
  }
}

/** A payer's rows of the shared stack's payments ledger, oldest first, read from its real SQLite file. */
export function paymentRowsOf(payer: string): { status: string; failure_reason: string | null }[] {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select status, failure_reason from payments where payer = ? order by id")
      .all(payer.toLowerCase()) as never;
  } finally {
    database.close();
  }
}

export interface PrepaidCode {
  id: number;
  object: string;
  code: string;
  model: string;
  tokens: { total: number; remaining: number };
  api_base: string;
  status_url: string;
}

/** A prepaid key bought through the official x402 fetch wrapper; throws unless the purchase answers 201. */
export async function buyPrepaidCode(
  privateKey: `0x${string}`,
  body?: unknown,
  path = "/prepaid/codes",
  base = stack().appUrl,
): Promise<PrepaidCode> {
  const paidFetch = wrapFetchWithPayment(fetch, paymentClient(privateKey));
  const response = await paidFetch(`${base}${path}`, {
    method: "POST",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (response.status !== 201) throw new Error(`purchase failed: ${response.status} ${JSON.stringify(json)}`);
  return json as PrepaidCode;
}
