import { polygon } from "./eip155-137";
import { base } from "./eip155-8453";
import { eip5042 } from "./eip155-5042";
import type { NetworkDefinition } from "./network";

export type { EvmNetwork, NetworkDefinition } from "./network";

export const networks = [polygon, base, eip5042] as const satisfies readonly NetworkDefinition[];

export type NetworkId = (typeof networks)[number]["id"];

export const networkIds = networks.map((network) => network.id) as [NetworkId, ...NetworkId[]];

/** The network `id`, with its USDC address replaced when one is configured. */
export function getNetwork(id: string, usdcAddress?: `0x${string}`): NetworkDefinition {
  const network = networks.find((candidate) => candidate.id === id);
  if (!network) throw new Error(`unknown network ${id}; supported: ${networkIds.join(", ")}`);
  return usdcAddress ? { ...network, usdc: { ...network.usdc, address: usdcAddress } } : network;
}
