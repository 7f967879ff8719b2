import type { SvmNetwork } from "./network";

export const solana: SvmNetwork = {
  id: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  kind: "svm",
  displayName: "Solana",
  cluster: "mainnet-beta",
  genesisHash: "5eykt4UsFv8P8NJdTREpY1vzqKqZKvdpKuc147dw2N9d",
  usdc: {
    address: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v",
    decimals: 6,
  },
  defaultRpcUrl: "https://api.mainnet-beta.solana.com",
  settlementOverheadUsd: "0.001",
  // A Solana slot: 400 ms.
  blockTimeMs: 400,
};
