import { polygon } from "./eip155-137";
import { base } from "./eip155-8453";
import { eip5042 } from "./eip155-5042";
import type { NetworkDefinition } from "./network";
import { solana } from "./solana-5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp";

export type { EvmNetwork, NetworkDefinition, SvmNetwork } from "./network";
export { addressProblem, privateKeyProblem, sameAddress } from "./account-formats";

export const networks = [polygon, base, eip5042, solana] as const satisfies readonly NetworkDefinition[];

export type NetworkId = (typeof networks)[number]["id"];

export const networkIds = networks.map((network) => network.id) as [NetworkId, ...NetworkId[]];

/** The network `id`, with its USDC address (EVM token contract) replaced when one is configured. */
export function getNetwork(id: string, usdcAddress?: string): NetworkDefinition {
  const network = networks.find((candidate) => candidate.id === id);
  if (!network) throw new Error(`unknown network ${id}; supported: ${networkIds.join(", ")}`);
  if (!usdcAddress || network.kind !== "evm") return network;
  return { ...network, usdc: { ...network.usdc, address: usdcAddress as `0x${string}` } };
}
