/** What the service needs to know about a settlement network; one file per network describes it. */
export interface EvmNetwork {
  /** CAIP-2 identifier, the key everything else uses. */
  id: `eip155:${number}`;
  kind: "evm";
  displayName: string;
  chainId: number;
  usdc: {
    address: `0x${string}`;
    decimals: number;
    /** EIP-712 domain of the token contract; clients sign transfer authorizations against it. */
    eip712: { name: string; version: string };
    /**
     * True when the spec leaves the address open: USDC_ADDRESS must then be configured, except on the embedded
     * local chain, where `address` is where the local USDC is placed.
     */
    addressFromConfiguration?: boolean;
  };
  /** Public RPC used when CHAIN_RPC_URL is not configured and the chain is not embedded. */
  defaultRpcUrl: string;
  /** Fee this deployment adds to every quote to cover settlement, in USD as a decimal string. */
  settlementOverheadUsd: string;
  /**
   * How settlement gas is priced. Absent: the overhead covers it. Present: every quote adds a live estimate,
   * the transferWithAuthorization gas x the chain's gas price, converted to USD at `nativeUsd` per whole native
   * token of `nativeDecimals`, plus `marginPercent`, rounded up.
   */
  settlementGas?: { nativeDecimals: number; nativeUsd: string; marginPercent: number };
}

export type NetworkDefinition = EvmNetwork;
