import { defineChain, type Chain } from "viem";
import type { EvmNetwork } from "./network";

/** Multicall3, at the address every EVM chain of ours has it (the x402 packages call it to explain failures). */
export const MULTICALL3_ADDRESS = "0xcA11bde05977b3631167028862bE2a173976CA11";

/** The network as a viem chain reached through `rpcUrl`, with its block time (receipt polling follows it). */
export function chainFor(network: EvmNetwork, rpcUrl: string): Chain {
  return defineChain({
    id: network.chainId,
    name: network.displayName,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
    contracts: { multicall3: { address: MULTICALL3_ADDRESS } },
    blockTime: network.blockTimeMs,
  });
}
