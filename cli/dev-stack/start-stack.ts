import { readFileSync } from "node:fs";
import { join } from "node:path";
import { redactedDatabaseUrl } from "../../config/database-url";
import { childEnvironment } from "../../config/env";
import { type LaunchConfig } from "../../config/dev-launch-config";
import { openStorage } from "../../server/storage/open-storage";
import {
  CHANNEL_AUTHORIZER_ACCOUNT_INDEX,
  DEV_MNEMONIC,
  devAccount,
  devAccountsFor,
  type DevKey,
} from "./dev-accounts";
import { OWNED_WALLET_FACTORY_ADDRESS, startLocalChain } from "./local-chain";
import { facilitatorAccess, startFacilitatorServer } from "../lib/facilitator-server";
import { startLocalSolana } from "./local-solana";
import { startLocalUpstream } from "./local-upstream";
import { buildIsStale, buildNextApp, startNextApp, startNextAppOnFreePort } from "./next-app";

export interface StackOptions {
  /** Called with each progress line (service URLs, keys, "ready"). */
  onLine?: (line: string) => void;
  /** Called with each line the app logs. */
  onAppLogLine?: (line: string) => void;
  /** Development provider behaviour, for tests and benchmarks. */
  upstream?: { deltaDelayMs?: number; streamDeltas?: number };
  /** Called when a piece stops on its own (a crash): the stack is then torn down. */
  onUnexpectedExit?: (what: string, code: number | null) => void;
  /** App processes over the one database, on consecutive ports from the configured one (default 1). */
  instances?: number;
  /** Variables set for the app processes, over the configuration's (for tests). */
  appEnv?: Record<string, string>;
}

/** One app process of the stack. */
export interface AppInstance {
  url: string;
  /** The process id of the app server itself (not of its guard). */
  pid(): number | undefined;
}

export interface RunningStack {
  /** The first instance's URL. */
  appUrl: string;
  instances: AppInstance[];
  chainRpcUrl: string | undefined;
  facilitatorUrl: string;
  /**
   * The credentials of the stack's own facilitator, as FACILITATOR_AUTH_HEADER takes them (`Name: value`): it serves
   * no request without them. Undefined when the facilitator is configured (not the stack's).
   */
  facilitatorAuthHeader: string | undefined;
  upstreamBaseUrl: string;
  payTo: string;
  /** Funded payers of the embedded chain (none when the chain is configured). */
  payers: DevKey[];
  stop(): Promise<void>;
}

/**
 * Starts the service with every piece the configuration does not provide replaced by its embedded default:
 * local chain, local facilitator, local upstream, SQLite. A configured piece is not started.
 */
export async function startStack(config: LaunchConfig, options: StackOptions = {}): Promise<RunningStack> {
  const say = options.onLine ?? (() => undefined);
  const stoppers: (() => Promise<void>)[] = [];
  let stopping = false;
  const stop = async () => {
    stopping = true;
    for (const stopper of stoppers.reverse()) await stopper().catch(() => undefined);
    stoppers.length = 0;
  };

  try {
    // Reached and migrated here, once: a wrong DATABASE_URL is reported before anything else starts, and the
    // instances then start on a migrated database.
    const storage = await openStorage(config.configured.databaseUrl, { poolSize: 1 });
    await storage.close();
    say(`database     ${redactedDatabaseUrl(config.configured.databaseUrl)}  (${storage.engine})`);

    const { network } = config;
    const dev = await devAccountsFor(network);
    const payTo = config.configured.payTo ?? dev.payTo.address;
    let chainRpcUrl = config.configured.chainRpcUrl;
    const embeddedChain = !chainRpcUrl && !config.configured.facilitatorUrl;
    if (!embeddedChain) {
      // The configured chain (or the facilitator's) is used as it is.
    } else if (network.kind === "evm") {
      // Kept across restarts beside the development database, so that the ledger and the chain keep agreeing.
      const stateFile = join(config.dataDir, "chain", `${network.id.replaceAll(":", "-")}.json`);
      const chain = await startLocalChain(network, config.localPorts.chain, { stateFile });
      stoppers.push(chain.stop);
      chainRpcUrl = chain.rpcUrl;
      say(
        `chain        ${chain.rpcUrl}  (anvil, chain id ${network.chainId}, local USDC at ${network.usdc.address}; state in ${stateFile})`,
      );
    } else {
      // Its journal of transactions, replayed at the next start, keeps it agreeing with the ledger likewise.
      const stateFile = join(config.dataDir, "chain", `${network.id.replaceAll(":", "-")}.jsonl`);
      const validator = await startLocalSolana({
        network,
        port: config.localPorts.chain,
        feePayer: dev.facilitator.address,
        payTo,
        payers: dev.payers.map((payer) => payer.address),
        stateFile,
      });
      stoppers.push(validator.stop);
      chainRpcUrl = validator.rpcUrl;
      say(
        `chain        ${validator.rpcUrl}  (LiteSVM JSON-RPC, ${network.id}, local USDC mint ${network.usdc.address}; state in ${stateFile})`,
      );
    }

    let facilitatorUrl = config.configured.facilitatorUrl;
    let facilitatorAuthHeader: string | undefined;
    if (!facilitatorUrl) {
      // It serves the apps it was started for (the secret is handed to them alone), as production's built-in one
      // does; unlike that one it plays a public facilitator, which serves any pay-to: the development world's tests
      // run several deployments, each with a pay-to of its own, over it.
      const access = facilitatorAccess();
      const facilitator = await startFacilitatorServer({
        network,
        rpcUrl: chainRpcUrl as string,
        privateKey: config.configured.facilitatorPrivateKey ?? dev.facilitator.privateKey,
        port: config.localPorts.facilitator,
        embeddedChain,
        access,
        // The embedded chain's contract wallets may pay before they are deployed.
        walletFactories: embeddedChain ? [OWNED_WALLET_FACTORY_ADDRESS] : [],
      });
      facilitatorAuthHeader = access.header;
      stoppers.push(facilitator.stop);
      facilitatorUrl = facilitator.url;
      const schemes = network.kind === "evm" ? "exact, upto and batch-settlement" : "exact";
      say(
        `facilitator  ${facilitator.url}  (x402 ${schemes} on ${config.network.id}, settles from ${facilitator.address})`,
      );
    }

    let upstreamBaseUrl = config.configured.upstreamBaseUrl;
    if (!upstreamBaseUrl) {
      const upstream = await startLocalUpstream({
        port: config.localPorts.upstream,
        faultDirectives: true,
        ...options.upstream,
      });
      stoppers.push(upstream.stop);
      upstreamBaseUrl = `${upstream.url}/v1`;
      say(`upstream     ${upstreamBaseUrl}  (local development provider)`);
    }

    if (buildIsStale()) {
      say("building the Next.js app (first start, or sources changed)...");
      await buildNextApp();
    }
    const appEnv = childEnvironment({
      NETWORK: network.id,
      USDC_ADDRESS: network.kind === "evm" ? network.usdc.address : "",
      CHAIN_RPC_URL: chainRpcUrl ?? "",
      // The console's buyers add the embedded chain to their browser wallet with this URL.
      ...(embeddedChain && network.kind === "evm" && chainRpcUrl ? { WALLET_RPC_URL: chainRpcUrl } : {}),
      PAY_TO: payTo,
      FACILITATOR_URL: facilitatorUrl,
      // A configured facilitator's credentials are the operator's own variables, inherited as they are.
      ...(facilitatorAuthHeader && { FACILITATOR_AUTH: "", FACILITATOR_AUTH_HEADER: facilitatorAuthHeader }),
      UPSTREAM_BASE_URL: upstreamBaseUrl,
      UPSTREAM_API_KEY: config.configured.upstreamApiKey ?? "",
      DATABASE_URL: config.configured.databaseUrl,
      PUBLIC_BASE_URL: config.configured.publicBaseUrl ?? "",
      // Channels on the embedded chain only: this development key is public, and worthless anywhere else.
      CHANNEL_AUTHORIZER_PRIVATE_KEY:
        embeddedChain && network.kind === "evm" ? devAccount(CHANNEL_AUTHORIZER_ACCOUNT_INDEX).privateKey : "",
      NODE_ENV: "production",
    });
    const instances: AppInstance[] = [];
    const count = options.instances ?? 1;
    // Instances answer as one origin, as behind a load balancer: a quote taken at one is payable at another (a
    // payment is bound to its resource URL). Unless configured, that origin is the first instance's.
    let publicBaseUrl = config.configured.publicBaseUrl;
    for (let index = 0; index < count; index++) {
      const port = config.port === 0 ? 0 : config.port + index;
      const env = { ...appEnv, ...(publicBaseUrl ? { PUBLIC_BASE_URL: publicBaseUrl } : {}), ...options.appEnv };
      const app = await startAppOnPort(config.host, port, env, options.onAppLogLine);
      publicBaseUrl ??= count > 1 ? app.url : undefined;
      stoppers.push(app.stop);
      const what = count > 1 ? `app instance ${index + 1}` : "the Next.js app";
      void app.exited.then((code) => {
        if (!stopping) options.onUnexpectedExit?.(what, code);
      });
      instances.push({ url: app.url, pid: () => guardedChildPid(app.child.pid) });
      const instance = count > 1 ? `, instance ${index + 1} of ${count}` : "";
      say(`app          ${app.url}  (network ${network.id}${instance})`);
    }
    const appUrl = instances[0]!.url;

    const payers = embeddedChain ? dev.payers : [];
    say(`pay-to       ${payTo}`);
    const [firstPayer] = payers;
    if (firstPayer) {
      say(
        `payer        ${firstPayer.address}  private key ${firstPayer.privateKey}  (10000 local USDC; ${
          network.kind === "evm"
            ? `accounts 2-9 of "${DEV_MNEMONIC}" are funded`
            : "development keypairs 2-9 are funded"
        })`,
      );
    }
    say(`paysvc ready at ${appUrl}`);
    return {
      appUrl,
      instances,
      chainRpcUrl,
      facilitatorUrl,
      facilitatorAuthHeader,
      upstreamBaseUrl,
      payTo,
      payers,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `next start` needs its port up front; with PORT=0 a free port is picked (startNextAppOnFreePort). */
async function startAppOnPort(
  host: string,
  configuredPort: number,
  env: Record<string, string>,
  onLogLine?: (line: string) => void,
) {
  if (configuredPort === 0) return startNextAppOnFreePort({ host, env, onLogLine });
  return startNextApp({ host, port: configuredPort, env, onLogLine });
}

/** The one child of a guard process (Linux: /proc), for a test that must kill the app itself. */
function guardedChildPid(guardPid: number | undefined): number | undefined {
  if (guardPid === undefined) return undefined;
  try {
    const children = readFileSync(`/proc/${guardPid}/task/${guardPid}/children`, "utf8").trim();
    return children ? Number(children.split(/\s+/)[0]) : undefined;
  } catch {
    return undefined;
  }
}
