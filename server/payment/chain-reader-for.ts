import type { NetworkDefinition } from "../../networks";
import type { ChainReader } from "./chain-payment";
import { EvmChainReader } from "./evm-chain-reader";
import { SvmChainReader } from "./svm-chain-reader";

/** The reader of a network's payments, over its RPC. */
export function chainReaderFor(network: NetworkDefinition, rpcUrl: string): ChainReader {
  return network.kind === "evm" ? new EvmChainReader(network, rpcUrl) : new SvmChainReader(network, rpcUrl);
}
