import type { EvmNetwork } from "./network";

/**
 * A chain whose native gas token is a dollar (18 decimals), so settlement gas is priced live into every quote.
 * The spec leaves its USDC address open: production deployments set USDC_ADDRESS; the embedded local chain
 * places its USDC at the address below.
 */
export const eip5042: EvmNetwork = {
  id: "eip155:5042",
  kind: "evm",
  displayName: "eip155:5042",
  chainId: 5042,
  usdc: {
    address: "0x3600000000000000000000000000000000000000",
    decimals: 6,
    eip712: { name: "USD Coin", version: "2" },
    addressFromConfiguration: true,
  },
  defaultRpcUrl: "http://127.0.0.1:8545",
  settlementOverheadUsd: "0.001",
  // Not given by the spec; chains with dollar gas finalise in under a second, 0.5 s assumed.
  blockTimeMs: 500,
  settlementGas: { nativeDecimals: 18, nativeUsd: "1", marginPercent: 25 },
  // Its gas token is a dollar of 18 decimals; the spec does not name it.
  nativeCurrency: { name: "USD", symbol: "USD", decimals: 18 },
};
