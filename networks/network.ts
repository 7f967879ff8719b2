/** What the service needs to know about a settlement network; one file per network describes it. */
interface NetworkBase {
  displayName: string;
  /**
   * The network's public RPC, for clients (the MCP helper's Solana wallet reads it unless told otherwise). The
   * service reads a chain only where quotes include gas, and then from CHAIN_RPC_URL. There is no default
   * facilitator: none is known that settles on these mainnets without credentials, so FACILITATOR_URL is required
   * outside the embedded stack.
   */
  defaultRpcUrl: string;
  /** Fee this deployment adds to every quote to cover settlement, in USD as a decimal string. */
  settlementOverheadUsd: string;
  /** How often the network makes a block (on Solana, a slot), in ms: the pace at which to look for a receipt. */
  blockTimeMs: number;
}

export interface EvmNetwork extends NetworkBase {
  /** CAIP-2 identifier, the key everything else uses. */
  id: `eip155:${number}`;
  kind: "evm";
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
  /**
   * The network's name in x402 v1 (`polygon`, `base`), where v1 has one: v1 clients (`x402-fetch` 1.x, `x402-axios`)
   * then pay with X-PAYMENT on the requirements of the 402's body. Absent: v1 is not offered.
   */
  x402V1Network?: string;
  /**
   * How settlement gas is priced. Absent: the overhead covers it. Present: every quote adds a live estimate,
   * the transferWithAuthorization gas x the chain's gas price, converted to USD at `nativeUsd` per whole native
   * token of `nativeDecimals`, plus `marginPercent`, rounded up.
   */
  settlementGas?: { nativeDecimals: number; nativeUsd: string; marginPercent: number };
  /** The chain's gas token, as a browser wallet is told when asked to add the chain. Absent: ether (18 decimals). */
  nativeCurrency?: { name: string; symbol: string; decimals: number };
  /** Where a person looks up a transaction or an address of the chain, for wallets that add it. */
  blockExplorerUrl?: string;
}

export interface SvmNetwork extends NetworkBase {
  /** CAIP-2 identifier: `solana:` and the first 32 characters of the cluster's genesis hash. */
  id: `solana:${string}`;
  kind: "svm";
  cluster: "mainnet-beta" | "devnet" | "testnet";
  /** The cluster's full genesis hash (base58), which its RPC reports and the embedded validator imitates. */
  genesisHash: string;
  usdc: {
    /** The SPL token mint (base58). */
    address: string;
    decimals: number;
    addressFromConfiguration?: false;
  };
  /**
   * Settlement fees are paid by the facilitator's fee payer in SOL and covered by the overhead: a TransferChecked
   * costs one signature fee plus a bounded priority fee, whatever the load.
   */
  settlementGas?: undefined;
}

export type NetworkDefinition = EvmNetwork | SvmNetwork;
