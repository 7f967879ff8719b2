import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { polygon } from "../../networks/eip155-137";
import { CHANNEL_AUTHORIZER_ACCOUNT_INDEX, devAccount, PAY_TO_ACCOUNT_INDEX } from "../../cli/dev-stack/dev-accounts";
import type { GuardedProcess } from "../../cli/dev-stack/guarded-process";
import { startLocalChain } from "../../cli/dev-stack/local-chain";
import { startStack, type RunningStack } from "../../cli/dev-stack/start-stack";
import { facilitatorAccess } from "../../cli/lib/facilitator-server";
import { startSideProcess } from "./side-process";

/**
 * The embedded stack the benchmarks run against, on Polygon with a fresh SQLite file. The chain is the embedded
 * one; the upstream and the facilitator run in processes of their own, as real ones would: in the benchmark's
 * process, their work would delay the client's event loop and so every measurement, and the direct baseline would
 * be answered without leaving that process while the gateway's calls cross two. A bare proxy to the same upstream
 * (bench/lib/bare-proxy-process.ts) runs beside them: the floor any Node.js proxy pays on this machine.
 */
export async function startBenchStack(upstream: {
  deltaGapMs: number;
  deltas: number;
}): Promise<RunningStack & { bareProxyBaseUrl: string; databaseUrl: string; stopAll(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-bench-"));
  const chain = await startLocalChain(polygon, 0);
  const sideProcesses: GuardedProcess[] = [];
  const stopPieces = async () => {
    for (const side of sideProcesses) await side.stop();
    await chain.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const provider = await startSideProcess("bench/lib/upstream-process.ts", [
      String(upstream.deltaGapMs),
      String(upstream.deltas),
    ]);
    sideProcesses.push(provider.process);
    const bareProxy = await startSideProcess("bench/lib/bare-proxy-process.ts", [provider.firstLine]);
    sideProcesses.push(bareProxy.process);
    const payTo = devAccount(PAY_TO_ACCOUNT_INDEX).address;
    const access = facilitatorAccess(payTo);
    const facilitator = await startSideProcess("bench/lib/facilitator-process.ts", [
      polygon.id,
      chain.rpcUrl,
      payTo,
      access.secret,
    ]);
    sideProcesses.push(facilitator.process);
    const stack = await startStack(
      loadLaunchConfig({
        NETWORK: polygon.id,
        PORT: "0",
        CHAIN_RPC_URL: chain.rpcUrl,
        FACILITATOR_URL: facilitator.firstLine,
        PAY_TO: payTo,
        UPSTREAM_BASE_URL: provider.firstLine,
        DATABASE_URL: `file:${join(dataDir, "bench.sqlite")}`,
      }),
      {
        appEnv: {
          CHANNEL_AUTHORIZER_PRIVATE_KEY: devAccount(CHANNEL_AUTHORIZER_ACCOUNT_INDEX).privateKey,
          FACILITATOR_AUTH_HEADER: access.header,
          // Thousands of calls a minute on one key and one wallet: the limits' own cost is section 14's.
          RATE_LIMIT_KEY_RPM: "0",
          RATE_LIMIT_KEY_CONCURRENT: "0",
          RATE_LIMIT_WALLET_RPM: "0",
          RATE_LIMIT_WALLET_CONCURRENT: "0",
          // Section 3 asks for thousands of quotes a second from one address.
          RATE_LIMIT_QUOTE_RPM: "0",
          // Section 6 holds hundreds of streams open from one address.
          PROVIDER_CALLS_PER_ADDRESS: "0",
        },
      },
    );
    return {
      ...stack,
      facilitatorAuthHeader: access.header,
      databaseUrl: `file:${join(dataDir, "bench.sqlite")}`,
      bareProxyBaseUrl: bareProxy.firstLine,
      stopAll: async () => {
        await stack.stop();
        await stopPieces();
      },
    };
  } catch (error) {
    await stopPieces();
    throw error;
  }
}
