import { prepaidPacks } from "../../config/prepaid-packs";
import type { ServiceConfig } from "../../config/service-config";

/**
 * The chain as `wallet_addEthereumChain` (EIP-3085) names it: what a browser wallet is given when it does not know
 * the deployment's chain yet.
 */
export interface AddEthereumChainParameter {
  chainId: `0x${string}`;
  chainName: string;
  nativeCurrency: { name: string; symbol: string; decimals: number };
  rpcUrls: string[];
  blockExplorerUrls?: string[];
}

/** An EVM deployment, whose packs a browser wallet buys with x402 `exact` (an EIP-3009 signature, no gas). */
export interface EvmPurchaseNetwork {
  kind: "evm";
  id: string;
  name: string;
  chainId: number;
  usdc: { address: `0x${string}`; decimals: number };
  addChain: AddEthereumChainParameter;
}

/** A Solana deployment: its packs are bought with an x402 client for Solana, not in the browser (yet). */
export interface SvmPurchaseNetwork {
  kind: "svm";
  id: string;
  name: string;
}

/** What the console's purchase form needs to buy a prepaid pack with the visitor's browser wallet. */
export interface WalletPurchaseTerms {
  /** Where the pack is bought (endpoint 8), on the page's own origin. */
  purchasePath: string;
  /** Where its owner adds tokens to a key (`{key, model, tokens}`), on the page's own origin. */
  topUpPath: string;
  models: string[];
  defaultModel: string;
  tokens: { min: number; max: number; step: number; default: number };
  network: EvmPurchaseNetwork | SvmPurchaseNetwork;
}

const ETHER = { name: "Ether", symbol: "ETH", decimals: 18 };

/**
 * The terms the console's pages hand to the purchase form. The RPC named to wallets is WALLET_RPC_URL (the embedded
 * chain's own in development), else the network's public one: never CHAIN_RPC_URL, which may carry a credential.
 */
export function walletPurchaseTerms(
  config: Pick<ServiceConfig, "network" | "walletRpcUrl" | "catalog">,
): WalletPurchaseTerms {
  const { network } = config;
  const models = config.catalog.chat.map((model) => model.id);
  const defaultModel = models.includes(prepaidPacks.defaultModel) ? prepaidPacks.defaultModel : (models[0] ?? "");
  const common = {
    purchasePath: "/prepaid/codes",
    topUpPath: "/prepaid/codes/top-up",
    models,
    defaultModel,
    tokens: {
      min: prepaidPacks.minTokens,
      max: prepaidPacks.maxTokens,
      step: prepaidPacks.stepTokens,
      default: prepaidPacks.defaultTokens,
    },
  };
  if (network.kind === "svm") return { ...common, network: { kind: "svm", id: network.id, name: network.displayName } };
  return {
    ...common,
    network: {
      kind: "evm",
      id: network.id,
      name: network.displayName,
      chainId: network.chainId,
      usdc: { address: network.usdc.address, decimals: network.usdc.decimals },
      addChain: {
        chainId: `0x${network.chainId.toString(16)}`,
        chainName: network.displayName,
        nativeCurrency: network.nativeCurrency ?? ETHER,
        rpcUrls: [config.walletRpcUrl ?? network.defaultRpcUrl],
        ...(network.blockExplorerUrl ? { blockExplorerUrls: [network.blockExplorerUrl] } : {}),
      },
    },
  };
}
