import { Command } from "commander";
import { SERVICE_VERSION } from "../config/version";
import { resolveEnvironmentPaths, setCallerDirectory } from "./lib/caller-directory";
import { registerConfigCommand } from "./commands/config-generate";
import { registerDevCommand } from "./commands/dev";
import { registerDiscoveryCommand } from "./commands/discovery-build";
import { registerHealthCommand } from "./commands/health";
import { registerLedgerCommand } from "./commands/ledger";
import { registerKeysCommand } from "./commands/keys";
import { registerChannelsCommand } from "./commands/channels";
import { registerMcpCommand } from "./commands/mcp";
import { registerNetworksCommand } from "./commands/networks";
import { registerQuoteCommand } from "./commands/quote";
import { registerStartCommand } from "./commands/start";

/** The `paysvc` program, run from `callerDirectory` (the directory the user ran it in; see cli/bin.mjs). */
export async function main(callerDirectory: string): Promise<void> {
  setCallerDirectory(callerDirectory);
  // A relative PAYSVC_CATALOG, DATABASE_URL or DATA_DIR is relative to where the command was run, as its arguments
  // are.
  resolveEnvironmentPaths();

  const program = new Command()
    .name("paysvc")
    .description("Run and manage paysvc deployments: a pay-per-request model gateway paid with x402")
    .version(SERVICE_VERSION);

  registerStartCommand(program);
  registerDevCommand(program);
  registerNetworksCommand(program);
  registerConfigCommand(program);
  registerDiscoveryCommand(program);
  registerHealthCommand(program);
  registerQuoteCommand(program);
  registerLedgerCommand(program);
  registerKeysCommand(program);
  registerChannelsCommand(program);
  registerMcpCommand(program);

  await program.parseAsync(process.argv).catch((error: unknown) => {
    console.error(`paysvc: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
