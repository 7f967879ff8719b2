import type { Command } from "commander";
import { ConfigurationError, loadLaunchConfig } from "../../config/env";
import { startStack } from "../../server/local-stack/start-stack";

export function registerStartCommand(program: Command): void {
  program
    .command("start")
    .description("Start the service; every piece not configured (chain, facilitator, upstream, database) is embedded")
    .addHelpText(
      "after",
      `
Examples:
  $ paysvc start                          # everything local: anvil, local facilitator, local upstream, SQLite
  $ NETWORK=eip155:8453 PORT=3001 paysvc start
  $ PAY_TO=0x... FACILITATOR_URL=https://... UPSTREAM_BASE_URL=https://... paysvc start`,
    )
    .action(async () => {
      let config;
      try {
        config = loadLaunchConfig();
      } catch (error) {
        if (error instanceof ConfigurationError) {
          console.error(error.message);
          process.exit(2);
        }
        throw error;
      }
      let shuttingDown = false;
      const stack = await startStack(config, {
        onLine: (line) => console.log(line),
        onAppLogLine: (line) => console.log(line),
        onUnexpectedExit: (what, code) => {
          if (shuttingDown) return;
          shuttingDown = true;
          console.error(`${what} exited unexpectedly (code ${code}); stopping everything`);
          void stack.stop().finally(() => process.exit(1));
        },
      });
      const shutdown = (signal: string) => {
        if (shuttingDown) return;
        shuttingDown = true;
        console.log(`${signal} received, stopping`);
        void stack.stop().finally(() => process.exit(0));
      };
      process.on("SIGINT", () => shutdown("SIGINT"));
      process.on("SIGTERM", () => shutdown("SIGTERM"));
    });
}
