import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { toClientEvmSigner } from "@x402/evm";
import { registerExactEvmScheme } from "@x402/evm/exact/client";
import { createPublicClient, http, type Abi } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import { expect } from "vitest";
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { localUsdcAbi } from "../../cli/dev-stack/local-chain";
import { startStack, type RunningStack } from "../../cli/dev-stack/start-stack";
import { FREE_PORTS } from "./free-ports";

/** A complete embedded deployment of `network`, like `NETWORK=<network> npm start`, and how to remove it. */
export async function startNetworkStack(network: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `paysvc-${network.replace(":", "-").slice(0, 20)}-`));
  const databasePath = join(dataDir, "paysvc.sqlite");
  const stack = await startStack(
    loadLaunchConfig({ NETWORK: network, ...FREE_PORTS, DATA_DIR: dataDir, DATABASE_URL: `file:${databasePath}` }),
  );
  return {
    stack,
    /** For extra apps over the same pieces (support/extra-app.ts). */
    deployment: {
      network,
      payTo: stack.payTo,
      facilitatorUrl: stack.facilitatorUrl,
      facilitatorAuthHeader: stack.facilitatorAuthHeader ?? "",
      upstreamBaseUrl: stack.upstreamBaseUrl,
      chainRpcUrl: stack.chainRpcUrl ?? "",
      databasePath,
    },
    remove: async () => {
      await stack.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The 402 of a POST without payment, decoded. */
export async function quoteOf(stack: RunningStack, path: string, body: unknown) {
  const response = await fetch(`${stack.appUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  expect(response.status).toBe(402);
  await response.body?.cancel();
  return decodePaymentRequiredHeader(response.headers.get("payment-required")!);
}

export const chatBody = (content: string) => ({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content }],
  max_tokens: 50,
});

/** The official x402 client for a payer of `stack`, allowed to pay `asset` on `network` when given. */
export function payingClient(stack: RunningStack, privateKey: string, asset?: string, network?: string) {
  const client = new x402Client();
  registerExactEvmScheme(client, {
    signer: toClientEvmSigner(
      privateKeyToAccount(privateKey as `0x${string}`),
      createPublicClient({ transport: http(stack.chainRpcUrl) }),
    ),
  });
  // The official client pays only assets it knows by default; a deployment's own USDC is allowed explicitly.
  if (asset && network)
    client.setSpendControls({
      allowedAssets: [{ network: network as `${string}:${string}`, asset, maxAmountPerPayment: "5000000" }],
    });
  return client;
}

/** The `asset` balance of `owner` on the stack's chain. */
export async function balanceOf(stack: RunningStack, asset: `0x${string}`, owner: string): Promise<bigint> {
  const client = createPublicClient({ transport: http(stack.chainRpcUrl) });
  return (await client.readContract({
    address: asset,
    abi: localUsdcAbi as Abi,
    functionName: "balanceOf",
    args: [owner],
  })) as bigint;
}
