import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { createPublicClient, http, type Abi } from "viem";
import { localUsdcAbi } from "../../cli/dev-stack/local-chain";
import { startStack, type RunningStack } from "../../cli/dev-stack/start-stack";
import { getNetwork, type EvmNetwork } from "../../networks";
import { FREE_PORTS } from "./free-ports";

const polygon = getNetwork("eip155:137") as EvmNetwork;

/** Starts one embedded stack (real anvil, facilitator, upstream, Next.js app, SQLite file) for every e2e file. */
export default async function setup(project: TestProject) {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-e2e-"));
  // Short enough that the "upstream hangs" case finishes quickly; the ordinary calls take milliseconds.
  process.env.UPSTREAM_TIMEOUT_MS = "3000";
  // Requests from 127.0.0.2 play a trusted reverse proxy; the tests' own 127.0.0.1 is an ordinary client.
  process.env.TRUSTED_PROXIES = "127.0.0.2";
  // Tests look at open ledger rows; reconciliation runs only where a test starts it.
  process.env.RECONCILE_INTERVAL_SECONDS = "0";
  const config = loadLaunchConfig({
    NETWORK: "eip155:137",
    ...FREE_PORTS,
    DATA_DIR: dataDir,
    DATABASE_URL: `file:${join(dataDir, "paysvc.sqlite")}`,
  });
  const appLog: string[] = [];
  const stack = await startStack(config, {
    onAppLogLine: (line) => appLog.push(line),
    // Every test file quotes from 127.0.0.1, two files at a time: the quote limit has its own app in its test.
    appEnv: { RATE_LIMIT_QUOTE_RPM: "0" },
  });
  // What the shared pay-to holds before any journey: the last e2e file compares the ledger with what it gained.
  const payToAtStart = await payToBalance(stack);
  project.provide("stack", {
    appUrl: stack.appUrl,
    chainRpcUrl: stack.chainRpcUrl ?? "",
    facilitatorUrl: stack.facilitatorUrl,
    facilitatorAuthHeader: stack.facilitatorAuthHeader ?? "",
    upstreamBaseUrl: stack.upstreamBaseUrl,
    // The default network is EVM (eip155:137), so addresses and keys are 0x-hex.
    payTo: stack.payTo as `0x${string}`,
    payers: stack.payers.map(({ address, privateKey }) => ({
      address: address as `0x${string}`,
      privateKey: privateKey as `0x${string}`,
    })),
    databasePath: join(dataDir, "paysvc.sqlite"),
    dataDir,
    payToAtStart: payToAtStart.toString(),
  });
  return async () => {
    await stack.stop();
    if (process.env.PAYSVC_E2E_SHOW_APP_LOG === "1") console.log(appLog.join("\n"));
    rmSync(dataDir, { recursive: true, force: true });
  };
}

async function payToBalance(stack: RunningStack): Promise<bigint> {
  const client = createPublicClient({ transport: http(stack.chainRpcUrl) });
  return (await client.readContract({
    address: polygon.usdc.address,
    abi: localUsdcAbi as Abi,
    functionName: "balanceOf",
    args: [stack.payTo as `0x${string}`],
  })) as bigint;
}

declare module "vitest" {
  export interface ProvidedContext {
    stack: {
      appUrl: string;
      chainRpcUrl: string;
      facilitatorUrl: string;
      /** What the stack's facilitator serves only its app with, as FACILITATOR_AUTH_HEADER takes it. */
      facilitatorAuthHeader: string;
      upstreamBaseUrl: string;
      payTo: `0x${string}`;
      payers: { address: `0x${string}`; privateKey: `0x${string}` }[];
      databasePath: string;
      dataDir: string;
      /** The pay-to's USDC balance before the first file, in atomic units. */
      payToAtStart: string;
    };
  }
}
