import type { EvmNetwork } from "./network";

export const base: EvmNetwork = {
  id: "eip155:8453",
  kind: "evm",
  displayName: "Base",
  x402V1Network: "base",
  chainId: 8453,
  usdc: {
    address: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913",
    decimals: 6,
    eip712: { name: "USD Coin", version: "2" },
  },
  defaultRpcUrl: "https://mainnet.base.org",
  blockExplorerUrl: "https://basescan.org",
  settlementOverheadUsd: "0.001",
  // Base makes a block every 2 s.
  blockTimeMs: 2000,
};
