import { x402Client } from "@x402/core/client";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { wrapFetchWithPayment } from "@x402/fetch";
import { privateKeyToAccount } from "viem/accounts";
import { devAccount, PAYER_ACCOUNT_INDEXES } from "../../cli/dev-stack/dev-accounts";

let client: x402Client | undefined;

/** The first development payer's official client: `exact`, at most $5 a payment. */
export function benchPayerClient(): x402Client {
  if (!client) {
    const payer = devAccount(PAYER_ACCOUNT_INDEXES[0]);
    client = new x402Client();
    registerExactEvmScheme(client, {
      signer: toClientEvmSigner(privateKeyToAccount(payer.privateKey as `0x${string}`)),
    });
    client.setSpendControls({ maxAmountPerPayment: "$5" });
  }
  return client;
}

/**
 * A prepaid key of `tokens` tokens of vendor-a/gpt-6-luna (1,000,000 unless told: the largest pack, about 40,000 short
 * calls), bought at `appUrl` by that payer.
 */
export async function buyBenchKey(appUrl: string, tokens = 1_000_000): Promise<string> {
  const response = await wrapFetchWithPayment(fetch, benchPayerClient())(`${appUrl}/prepaid/codes`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens }),
  });
  if (response.status !== 201)
    throw new Error(`buying a key at ${appUrl}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { code: string }).code;
}
