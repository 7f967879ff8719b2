import type { Command } from "commander";
import { ConfigurationError, environmentWith, loadLaunchConfig } from "../../config/env";
import { startStack, type RunningStack } from "../../server/local-stack/start-stack";
import { fileNameFor } from "../lib/deployment-config";
import { fail } from "../lib/output";

/**
 * The launch configuration of each network: the first keeps the configured ports (3000, 8545, 4020, 4010 by
 * default); the others take the next app ports and free ports for their pieces, and a database of their own.
 */
function launchConfigs(networks: string[] | undefined) {
  const base = loadLaunchConfig();
  if (!networks || networks.length <= 1)
    return [loadLaunchConfig(environmentWith(networks?.[0] ? { NETWORK: networks[0] } : {}))];
  return networks.map((network, index) =>
    loadLaunchConfig(
      environmentWith({
        NETWORK: network,
        PORT: String(base.port === 0 ? 0 : base.port + index),
        ...(index > 0 ? { LOCAL_CHAIN_PORT: "0", LOCAL_FACILITATOR_PORT: "0", LOCAL_UPSTREAM_PORT: "0" } : {}),
        DATABASE_URL: `file:${base.dataDir}/${fileNameFor(network)}.sqlite`,
      }),
    ),
  );
}

export function registerDevCommand(program: Command): void {
  program
    .command("dev")
    .alias("start")
    .description(
      "Run the service with every piece not configured embedded (chain, facilitator, upstream, SQLite), for one or several networks",
    )
    .option("--networks <caip2,...>", "networks to run at once, each on its own port (default: NETWORK or eip155:137)")
    .addHelpText(
      "after",
      `
Examples:
  $ paysvc dev                                   # what npm start runs: anvil, local facilitator, local upstream, SQLite
  $ paysvc dev --networks eip155:137,eip155:8453 # two deployments, on ports 3000 and 3001
  $ PAY_TO=0x... FACILITATOR_URL=https://... UPSTREAM_BASE_URL=https://... paysvc start`,
    )
    .action(async (options: { networks?: string }) => {
      let configs;
      try {
        configs = launchConfigs(
          options.networks
            ?.split(",")
            .map((network) => network.trim())
            .filter(Boolean),
        );
      } catch (error) {
        if (error instanceof ConfigurationError) {
          console.error(error.message);
          process.exit(2);
        }
        throw error;
      }
      const stacks: RunningStack[] = [];
      let shuttingDown = false;
      const stopAll = async (code: number) => {
        if (shuttingDown) return;
        shuttingDown = true;
        await Promise.all(stacks.map((stack) => stack.stop()));
        process.exit(code);
      };
      process.on("SIGINT", () => void stopAll(0));
      process.on("SIGTERM", () => void stopAll(0));
      const prefix = (network: string) => (configs.length > 1 ? `[${network}] ` : "");
      try {
        for (const config of configs) {
          stacks.push(
            await startStack(config, {
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
        await Promise.all(stacks.map((stack) => stack.stop()));
        fail((error as Error).message);
      }
      if (configs.length > 1) console.log(`all ${configs.length} deployments ready`);
    });
}
