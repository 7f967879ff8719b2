import type { Command } from "commander";
import { networks } from "../../networks";
import { action, print, table } from "../lib/output";

export function registerNetworksCommand(program: Command): void {
  program
    .command("networks")
    .description("List the networks a deployment can serve and their parameters")
    .option("--json", "print JSON")
    .addHelpText("after", "\nExamples:\n  $ paysvc networks\n  $ paysvc networks --json")
    .action(
      action((options: { json?: boolean }) =>
        print(options.json === true, networks, () =>
          table([
            ["NETWORK", "CHAIN ID", "USDC", "EIP-712", "OVERHEAD USD", "GAS IN QUOTE"],
            ...networks.map((network) => [
              network.id,
              String(network.chainId),
              network.usdc.addressFromConfiguration ? `${network.usdc.address} (USDC_ADDRESS)` : network.usdc.address,
              `${network.usdc.eip712.name} / ${network.usdc.eip712.version}`,
              network.settlementOverheadUsd,
              network.settlementGas ? `live, +${network.settlementGas.marginPercent}%` : "no",
            ]),
          ]),
        ),
      ),
    );
}
