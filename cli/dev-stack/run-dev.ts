import { ConfigurationError } from "../../config/env";
import { environmentWith, loadLaunchConfig, type LaunchConfig } from "../../config/dev-launch-config";
import { startStack, type RunningStack } from "./start-stack";
import { devDatabases, type DevDatabases, type DevEngine } from "./dev-database";
import { fail } from "../lib/output";

const MAX_INSTANCES = 16;

export interface DevOptions {
  networks?: string;
  database?: string;
  instances: string;
}

/**
 * The launch configuration of each network: the first keeps the configured ports (3000, 8545, 4020, 4010 by
 * default); the others take the app ports after the first network's instances, and free ports for their pieces.
 */
function launchConfigs(
  base: LaunchConfig,
  networks: string[],
  databases: DevDatabases,
  instances: number,
): LaunchConfig[] {
  return networks.map((network, index) =>
    loadLaunchConfig(
      environmentWith({
        NETWORK: network,
        PORT: String(base.port === 0 ? 0 : base.port + index * instances),
        ...(index > 0 ? { LOCAL_CHAIN_PORT: "0", LOCAL_FACILITATOR_PORT: "0", LOCAL_UPSTREAM_PORT: "0" } : {}),
        DATABASE_URL: databases.urls.get(network)!,
      }),
    ),
  );
}

/** The options, checked: the networks (at least one), the database engine, the instance count. */
function parseOptions(
  options: DevOptions,
  base: LaunchConfig,
): { networks: string[]; engine?: DevEngine; instances: number } {
  const listed = options.networks
    ?.split(",")
    .map((network) => network.trim())
    .filter(Boolean);
  const networks = listed?.length ? listed : [base.network.id];
  if (options.database !== undefined && options.database !== "sqlite" && options.database !== "postgres") {
    throw new ConfigurationError([`--database: must be sqlite or postgres, not "${options.database}"`]);
  }
  const instances = Number(options.instances);
  if (!Number.isInteger(instances) || instances < 1 || instances > MAX_INSTANCES) {
    throw new ConfigurationError([`--instances: must be a whole number from 1 to ${MAX_INSTANCES}`]);
  }
  return { networks, engine: options.database as DevEngine | undefined, instances };
}

/**
 * `paysvc dev`: the development world around the product, every piece not configured started embedded (chain,
 * facilitator, provider, database) for each network, until SIGINT/SIGTERM or a piece's crash.
 */
export async function runDev(options: DevOptions): Promise<void> {
  let base: LaunchConfig;
  let parsed;
  try {
    base = loadLaunchConfig();
    parsed = parseOptions(options, base);
  } catch (error) {
    if (error instanceof ConfigurationError) {
      console.error(error.message);
      process.exit(2);
    }
    throw error;
  }
  const { networks, engine, instances } = parsed;
  const stacks: RunningStack[] = [];
  let databases: DevDatabases | undefined;
  let shuttingDown = false;
  const stopEverything = async () => {
    await Promise.all(stacks.map((stack) => stack.stop()));
    await databases?.postgres?.stop();
  };
  const stopAll = async (code: number) => {
    if (shuttingDown) return;
    shuttingDown = true;
    await stopEverything();
    process.exit(code);
  };
  process.on("SIGINT", () => void stopAll(0));
  process.on("SIGTERM", () => void stopAll(0));
  const prefix = (network: string) => (networks.length > 1 ? `[${network}] ` : "");
  try {
    databases = await devDatabases(base, networks, engine, (line) => console.log(line));
    void databases.postgres?.exited.then((code) => {
      if (shuttingDown) return;
      console.error(`the embedded PostgreSQL server exited unexpectedly (code ${code}); stopping everything`);
      void stopAll(1);
    });
    for (const config of launchConfigs(base, networks, databases, instances)) {
      stacks.push(
        await startStack(config, {
          instances,
          onLine: (line) => console.log(`${prefix(config.network.id)}${line}`),
          onAppLogLine: (line) => console.log(`${prefix(config.network.id)}${line}`),
          onUnexpectedExit: (what, code) => {
            console.error(
              `${prefix(config.network.id)}${what} exited unexpectedly (code ${code}); stopping everything`,
            );
            void stopAll(1);
          },
        }),
      );
    }
  } catch (error) {
    await stopEverything();
    fail((error as Error).message);
  }
  if (networks.length > 1) console.log(`all ${networks.length} deployments ready`);
}
