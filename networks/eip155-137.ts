import type { EvmNetwork } from "./network";

export const polygon: EvmNetwork = {
  id: "eip155:137",
  kind: "evm",
  displayName: "Polygon PoS",
  x402V1Network: "polygon",
  chainId: 137,
  usdc: {
    address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359",
    decimals: 6,
    eip712: { name: "USD Coin", version: "2" },
  },
  defaultRpcUrl: "https://polygon-rpc.com",
  nativeCurrency: { name: "POL", symbol: "POL", decimals: 18 },
  blockExplorerUrl: "https://polygonscan.com",
  settlementOverheadUsd: "0.001",
  // Polygon PoS makes a block about every 2 s.
  blockTimeMs: 2000,
};
