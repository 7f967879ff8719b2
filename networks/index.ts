import { polygon } from "./eip155-137";
import { base } from "./eip155-8453";
import type { NetworkDefinition } from "./network";

export type { EvmNetwork, NetworkDefinition } from "./network";

export const networks = [polygon, base] as const satisfies readonly NetworkDefinition[];

export type NetworkId = (typeof networks)[number]["id"];

export const networkIds = networks.map((network) => network.id) as [NetworkId, ...NetworkId[]];

export function getNetwork(id: string): NetworkDefinition {
  const network = networks.find((candidate) => candidate.id === id);
  if (!network) throw new Error(`unknown network ${id}; supported: ${networkIds.join(", ")}`);
  return network;
}
