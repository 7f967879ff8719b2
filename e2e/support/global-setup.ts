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

type SharedStack = ProvidedStack & { stop(): Promise<void> };

/**
 * The stacks of one vitest run, kept on the main process's global object: the e2e project and the project of the
 * ledger check (which runs after it) both list this setup, and each loads its own copy of this module.
 */
const run = globalThis as typeof globalThis & {
  paysvcE2eStacks?: { started: Promise<SharedStack[]>; users: number };
};

/**
 * Starts one embedded stack (real anvil, facilitator, upstream, Next.js app, SQLite file) for each vitest worker:
 * the e2e files a worker runs, one at a time, share its stack, as every e2e file shared the one stack when they ran
 * one at a time; files on other workers never touch it, so balances asserted exactly stay exact.
 */
export default async function setup(project: TestProject) {
  // As many as files can run at once (vitest.config.ts, or --maxWorkers).
  run.paysvcE2eStacks ??= { started: startStacks(Number(project.vitest.config.maxWorkers)), users: 0 };
  const shared = run.paysvcE2eStacks;
  shared.users += 1;
  const stacks = await shared.started;
  project.provide(
    "stacks",
    stacks.map(({ stop: _stop, ...stack }) => stack),
  );
  return async () => {
    shared.users -= 1;
    if (shared.users > 0) return;
    run.paysvcE2eStacks = undefined;
    await Promise.all(stacks.map((stack) => stack.stop()));
  };
}

async function startStacks(count: number): Promise<SharedStack[]> {
  // Short enough that the "upstream hangs" case finishes quickly; the ordinary calls take milliseconds.
  process.env.UPSTREAM_TIMEOUT_MS = "3000";
  // Requests from 127.0.0.2 play a trusted reverse proxy; the tests' own 127.0.0.1 is an ordinary client.
  process.env.TRUSTED_PROXIES = "127.0.0.2";
  // Tests look at open ledger rows; reconciliation runs only where a test starts it.
  process.env.RECONCILE_INTERVAL_SECONDS = "0";
  const started = await Promise.allSettled(Array.from({ length: count }, () => startSharedStack()));
  const stacks = started.flatMap((result) => (result.status === "fulfilled" ? [result.value] : []));
  const failed = started.find((result) => result.status === "rejected");
  if (failed) {
    await Promise.all(stacks.map((stack) => stack.stop()));
    throw failed.reason;
  }
  return stacks;
}

async function startSharedStack(): Promise<SharedStack> {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-e2e-"));
  const config = loadLaunchConfig({
    NETWORK: "eip155:137",
    ...FREE_PORTS,
    DATA_DIR: dataDir,
    DATABASE_URL: `file:${join(dataDir, "paysvc.sqlite")}`,
  });
  const appLog: string[] = [];
  const stack = await startStack(config, {
    onAppLogLine: (line) => appLog.push(line),
    // Every test file quotes from 127.0.0.1: the quote limit has its own app in its test.
    appEnv: { RATE_LIMIT_QUOTE_RPM: "0" },
  });
  // What the pay-to holds before any journey: the ledger check compares the ledger with what it gained.
  const payToAtStart = await payToBalance(stack);
  return {
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
    stop: async () => {
      await stack.stop();
      if (process.env.PAYSVC_E2E_SHOW_APP_LOG === "1") console.log(appLog.join("\n"));
      rmSync(dataDir, { recursive: true, force: true });
    },
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

interface ProvidedStack {
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
}

declare module "vitest" {
  export interface ProvidedContext {
    /** One shared stack per vitest worker, the first for worker 1 (VITEST_POOL_ID). */
    stacks: ProvidedStack[];
  }
}
