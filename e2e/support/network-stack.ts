import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { decodePaymentRequiredHeader } from "@x402/core/http";
import { expect } from "vitest";
import { loadLaunchConfig } from "../../config/env";
import { startStack, type RunningStack } from "../../server/local-stack/start-stack";
import { FREE_PORTS } from "./free-ports";

/** A complete embedded deployment of `network`, like `NETWORK=<network> npm start`, and how to remove it. */
export async function startNetworkStack(network: string) {
  const dataDir = mkdtempSync(join(tmpdir(), `paysvc-${network.replace(":", "-").slice(0, 20)}-`));
  const stack = await startStack(
    loadLaunchConfig({
      NETWORK: network,
      ...FREE_PORTS,
      DATABASE_URL: `file:${join(dataDir, "paysvc.sqlite")}`,
    }),
  );
  return {
    stack,
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
