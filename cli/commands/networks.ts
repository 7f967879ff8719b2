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
            ["NETWORK", "CHAIN", "BLOCK", "USDC", "SIGNING", "OVERHEAD USD", "GAS IN QUOTE"],
            ...networks.map((network) => [
              network.id,
              network.kind === "evm" ? `chain id ${network.chainId}` : `${network.cluster} cluster`,
              `${network.blockTimeMs / 1000} s`,
              network.usdc.addressFromConfiguration ? `${network.usdc.address} (USDC_ADDRESS)` : network.usdc.address,
              network.kind === "evm"
                ? `EIP-712 ${network.usdc.eip712.name} / ${network.usdc.eip712.version}`
                : "SPL TransferChecked, facilitator fee payer",
              network.settlementOverheadUsd,
              network.settlementGas ? `live, +${network.settlementGas.marginPercent}%` : "no",
            ]),
          ]),
        ),
      ),
    );
}
