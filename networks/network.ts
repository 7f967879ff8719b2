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
  };
  /** Public RPC used when CHAIN_RPC_URL is not configured and the chain is not embedded. */
  defaultRpcUrl: string;
  /** Fee this deployment adds to every quote to cover settlement, in USD as a decimal string. */
  settlementOverheadUsd: string;
}

export type NetworkDefinition = EvmNetwork;
