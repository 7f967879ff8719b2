import type { Command } from "commander";
import type { DevOptions } from "../dev-stack/run-dev";

export function registerDevCommand(program: Command): void {
  program
    .command("dev")
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

Production is \`paysvc start\`: it starts nothing embedded.`,
    )
    .action(async (options: DevOptions) => {
      // Loaded only here: the development stack (and its packages) is part of no other command.
      const { runDev } = await import("../dev-stack/run-dev");
      await runDev(options);
    });
}
