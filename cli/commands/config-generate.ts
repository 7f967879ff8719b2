import type { Command } from "commander";
import { userPath } from "../lib/caller-directory";
import { validateDeploymentConfig, writeDeploymentConfig } from "../lib/deployment-config";
import { action, print } from "../lib/output";

interface Options {
  network: string;
  origin: string;
  payTo: string;
  facilitator?: string;
  asset?: string;
  prepaidApiBase?: string;
  channels?: boolean;
  out: string;
  json?: boolean;
}

export function registerConfigCommand(program: Command): void {
  const config = program.command("config").description("Deployment configuration");
  config
    .command("generate")
    .description("Write a network's validated deployment configuration (<network>.json and <network>.env)")
    .requiredOption("--network <caip2>", "network the deployment serves, e.g. eip155:8453")
    .requiredOption("--origin <url>", "public origin of the deployment")
    .requiredOption("--pay-to <address>", "address that receives payments (EIP-55 checksum checked)")
    .option("--facilitator <url>", "x402 facilitator URL")
    .option("--asset <address>", "USDC address, for networks that leave it to configuration")
    .option("--prepaid-api-base <url>", "where prepaid keys are used (default: origin + /v1)")
    .option("--channels", "the deployment offers batch-settlement channels (CHANNEL_AUTHORIZER_PRIVATE_KEY is set)")
    .option("--out <dir>", "directory to write to, relative to the current directory", "deployments")
    .option("--json", "print JSON")
    .addHelpText(
      "after",
      "\nExamples (0xYourAddress stands for an address of your own, checked in the network's format):\n  $ paysvc config generate --network eip155:8453 --origin https://base.pay.example --pay-to 0xYourAddress\n  $ paysvc config generate --network eip155:5042 --origin https://arc.pay.example --pay-to 0xYourAddress --asset 0xUsdcAddress --out deployments",
    )
    .action(
      action((options: Options) => {
        const validated = validateDeploymentConfig({
          network: options.network,
          origin: options.origin,
          payTo: options.payTo,
          facilitatorUrl: options.facilitator,
          asset: options.asset,
          prepaidApiBase: options.prepaidApiBase,
          channels: options.channels === true,
        });
        const files = writeDeploymentConfig(validated, userPath(options.out));
        print(options.json === true, { config: validated, files }, () => `wrote ${files.join(", ")}`);
      }),
    );
}
