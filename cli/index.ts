import { Command } from "commander";
import { SERVICE_VERSION } from "../config/version";
import { registerStartCommand } from "./commands/start";

const program = new Command()
  .name("paysvc")
  .description("Run and manage paysvc deployments: a pay-per-request model gateway paid with x402")
  .version(SERVICE_VERSION);

registerStartCommand(program);

program.parseAsync(process.argv).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
