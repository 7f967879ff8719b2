import type { Command } from "commander";
import { ConfigurationError, environmentWith, loadLaunchConfig, type LaunchConfig } from "../../config/env";
import { startStack, type RunningStack } from "../../server/local-stack/start-stack";
import { devDatabases, type DevDatabases, type DevEngine } from "../lib/dev-database";
import { fail } from "../lib/output";

const MAX_INSTANCES = 16;

interface DevOptions {
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

export function registerDevCommand(program: Command): void {
  program
    .command("dev")
    .alias("start")
    .description(
      "Run the service with every piece not configured embedded (chain, facilitator, upstream, database), for one or several networks",
    )
    .option("--networks <caip2,...>", "networks to run at once, each on its own ports (default: NETWORK or eip155:137)")
    .option(
      "--database <engine>",
      "sqlite (default: one file per network) or postgres (DATABASE_URL, else an embedded server under DATA_DIR/postgres)",
    )
    .option("--instances <n>", "app processes per network over its one database, on consecutive ports", "1")
    .addHelpText(
      "after",
      `
Examples:
  $ paysvc dev                                   # what npm start runs: anvil, local facilitator, local upstream, SQLite
  $ paysvc dev --networks eip155:137,eip155:8453 # two deployments, on ports 3000 and 3001
  $ paysvc dev --database postgres --instances 2 # embedded PostgreSQL, two app processes on ports 3000 and 3001
  $ PAY_TO=0x... FACILITATOR_URL=https://... UPSTREAM_BASE_URL=https://... paysvc start`,
    )
    .action(async (options: DevOptions) => {
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
    });
}
