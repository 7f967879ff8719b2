import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { loadServiceConfig } from "../../config/service-config";
import { getNetwork } from "../../networks";
import { walletPurchaseTerms } from "./wallet-purchase";

const catalog = defaultCatalog();

describe("the terms the console's purchase form gets", () => {
  it("names the deployment's chain as wallet_addEthereumChain wants it, with the network's public RPC", () => {
    const terms = walletPurchaseTerms({ network: getNetwork("eip155:137"), walletRpcUrl: undefined, catalog });
    expect(terms).toEqual({
      purchasePath: "/prepaid/codes",
      topUpPath: "/prepaid/codes/top-up",
      models: catalog.chat.map((model) => model.id),
      defaultModel: "vendor-a/gpt-6-luna",
      tokens: { min: 100_000, max: 1_000_000, step: 100_000, default: 100_000 },
      network: {
        kind: "evm",
        id: "eip155:137",
        name: "Polygon PoS",
        chainId: 137,
        usdc: { address: "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359", decimals: 6 },
        addChain: {
          chainId: "0x89",
          chainName: "Polygon PoS",
          nativeCurrency: { name: "POL", symbol: "POL", decimals: 18 },
          rpcUrls: ["https://polygon-rpc.com"],
          blockExplorerUrls: ["https://polygonscan.com"],
        },
      },
    });
  });

  it("names WALLET_RPC_URL when set (the embedded chain's in development), never CHAIN_RPC_URL", () => {
    const config = loadServiceConfig({
      NETWORK: "eip155:8453",
      PAY_TO: "0x70997970C51812dc3A010C7d01b50e0d17dc79C8",
      FACILITATOR_URL: "https://x402.example",
      UPSTREAM_BASE_URL: "https://upstream.example/v1",
      CHAIN_RPC_URL: "https://base.example/v2/secret-key",
      WALLET_RPC_URL: "http://127.0.0.1:8545",
    });
    const { network } = walletPurchaseTerms(config);
    expect(network).toMatchObject({
      kind: "evm",
      chainId: 8453,
      addChain: {
        chainId: "0x2105",
        nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
        rpcUrls: ["http://127.0.0.1:8545"],
      },
    });
    expect(JSON.stringify(network)).not.toContain("secret-key");
  });

  it("on Solana, names the network only: buying in the browser is for EVM networks", () => {
    const terms = walletPurchaseTerms({
      network: getNetwork("solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp"),
      walletRpcUrl: undefined,
      catalog,
    });
    expect(terms.network).toEqual({ kind: "svm", id: "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp", name: "Solana" });
  });
});
