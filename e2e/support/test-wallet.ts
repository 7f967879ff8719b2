import type { Page } from "playwright-core";
import { hexToBigInt, type TypedDataDefinition } from "viem";
import { privateKeyToAccount } from "viem/accounts";

/** One request the page made of the wallet, as it made it. */
export interface WalletRequest {
  method: string;
  params: unknown[];
}

export interface TestWalletOptions {
  /** The account the wallet shows and signs with. */
  privateKey: `0x${string}`;
  /** Signs with this key instead while claiming `privateKey`'s address: a signature the service must refuse. */
  signingKey?: `0x${string}`;
  /** What it answers to a signature request: signs, or the person rejects it (4001). */
  signature?: "sign" | "reject";
  /** What it answers to a switch of chain: switches, or the person refuses (4001). */
  switching?: "accept" | "refuse";
  /** Chains it knows already, with their RPC; any other must be added first (a switch to it answers 4902). */
  knownChains?: Record<number, string>;
  /** The chain it is on at first. */
  startChainId?: number;
  /** How the page finds it: an EIP-6963 announcement, or only the legacy window.ethereum. */
  discovery?: "eip6963" | "window.ethereum";
  /** The name it announces; wallets injected into one page need different names. */
  name?: string;
}

interface Answer {
  result?: unknown;
  error?: { code: number; message: string };
}

/**
 * Injects a browser wallet into `page` before its scripts run: an EIP-1193 provider announced through EIP-6963 (or
 * set at window.ethereum) whose every request is answered here, in the test, signing with a development account's
 * key and reading the chain it was told to add through that chain's RPC. It records every request the page makes.
 */
export async function injectTestWallet(page: Page, options: TestWalletOptions) {
  const account = privateKeyToAccount(options.privateKey);
  const signer = options.signingKey ? privateKeyToAccount(options.signingKey) : account;
  const chains = new Map(
    Object.entries(options.knownChains ?? { 1: "http://127.0.0.1:1" }).map(([id, url]) => [Number(id), url]),
  );
  let chainId = options.startChainId ?? 1;
  const requests: WalletRequest[] = [];
  const refuse = (code: number, message: string): Answer => ({ error: { code, message } });

  async function answer(method: string, params: unknown[]): Promise<Answer> {
    switch (method) {
      case "eth_requestAccounts":
      case "eth_accounts":
        return { result: [account.address] };
      case "eth_chainId":
        return { result: `0x${chainId.toString(16)}` };
      case "wallet_switchEthereumChain": {
        const target = Number(hexToBigInt((params[0] as { chainId: `0x${string}` }).chainId));
        if (options.switching === "refuse") return refuse(4001, "User rejected the request.");
        if (!chains.has(target)) return refuse(4902, `Unrecognized chain ID "0x${target.toString(16)}".`);
        chainId = target;
        return { result: null };
      }
      case "wallet_addEthereumChain": {
        const chain = params[0] as { chainId: `0x${string}`; rpcUrls: string[] };
        const target = Number(hexToBigInt(chain.chainId));
        chains.set(target, chain.rpcUrls[0]!);
        // As MetaMask does: the added chain is offered at once, and switched to unless the person refuses.
        if (options.switching !== "refuse") chainId = target;
        return { result: null };
      }
      case "personal_sign": {
        // EIP-191: the message (hex of its bytes), then the account.
        const [message, address] = params as [`0x${string}`, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) return refuse(4100, "Unknown account.");
        if (options.signature === "reject") return refuse(4001, "User rejected the request.");
        return { result: await signer.signMessage({ message: { raw: message } }) };
      }
      case "eth_signTypedData_v4": {
        const [address, json] = params as [string, string];
        if (address.toLowerCase() !== account.address.toLowerCase()) return refuse(4100, "Unknown account.");
        if (options.signature === "reject") return refuse(4001, "User rejected the request.");
        return { result: await signer.signTypedData(typedDataFromJson(json)) };
      }
      case "eth_call":
      case "eth_blockNumber":
      case "eth_getBalance":
        return forward(chains.get(chainId), method, params);
      default:
        return refuse(4200, `The test wallet does not support ${method}.`);
    }
  }

  const name = options.name ?? "Test Wallet";
  const bridgeName = `__testWallet_${name.replace(/\W/g, "_")}`;
  await page.exposeFunction(bridgeName, async (method: string, paramsJson: string) => {
    const params = JSON.parse(paramsJson) as unknown[];
    requests.push({ method, params });
    return answer(method, params);
  });
  await page.addInitScript(
    ({ discovery, name, bridgeName }) => {
      type Bridge = (
        method: string,
        params: string,
      ) => Promise<{ result?: unknown; error?: { code: number; message: string } }>;
      // Looked up at each request: the exposed function is bound to every document the page loads.
      const bridge = (method: string, params: string) =>
        (window as unknown as Record<string, Bridge>)[bridgeName]!(method, params);
      const provider = {
        isTestWallet: true,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          const { result, error } = await bridge(method, JSON.stringify(params ?? []));
          if (error) throw Object.assign(new Error(error.message), { code: error.code });
          return result;
        },
        on() {},
        removeListener() {},
      };
      if (discovery === "window.ethereum") {
        (window as unknown as { ethereum: typeof provider }).ethereum = provider;
        return;
      }
      const info = {
        // A UUIDv4 per page session, as EIP-6963 asks (127.0.0.1 is a secure context).
        uuid: crypto.randomUUID(),
        name,
        icon: "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 2 2'%3E%3Ccircle cx='1' cy='1' r='1' fill='%23f5a524'/%3E%3C/svg%3E",
        rdns: "dev.paysvc.test-wallet",
      };
      const announce = () =>
        window.dispatchEvent(
          new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider }) }),
        );
      window.addEventListener("eip6963:requestProvider", announce);
      announce();
    },
    { discovery: options.discovery ?? "eip6963", name, bridgeName },
  );

  return {
    address: account.address,
    /** Every request the page made, in order. */
    requests: () => [...requests],
    /** The requests of one method. */
    requestsOf: (method: string) => requests.filter((request) => request.method === method),
    chainId: () => chainId,
  };
}

/** A read passed on to the RPC of the chain the wallet is on, as a wallet does. */
async function forward(rpcUrl: string | undefined, method: string, params: unknown[]): Promise<Answer> {
  if (!rpcUrl) return { error: { code: -32603, message: "no RPC for this chain" } };
  try {
    const response = await fetch(rpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const json = (await response.json()) as Answer;
    return json.error ? { error: json.error } : { result: json.result };
  } catch (error) {
    return { error: { code: -32603, message: `the chain's RPC is unreachable: ${String(error)}` } };
  }
}

/** eth_signTypedData_v4's JSON back to what viem signs: integer fields as bigints, the domain type left to viem. */
function typedDataFromJson(json: string): TypedDataDefinition {
  const typed = JSON.parse(json) as {
    domain: Record<string, unknown>;
    types: Record<string, { name: string; type: string }[]>;
    primaryType: string;
    message: Record<string, unknown>;
  };
  const { EIP712Domain: _domain, ...types } = typed.types;
  const fields = types[typed.primaryType] ?? [];
  const message = Object.fromEntries(
    Object.entries(typed.message).map(([name, value]) => {
      const type = fields.find((field) => field.name === name)?.type ?? "";
      return [name, /^u?int\d*$/.test(type) ? BigInt(value as string) : value];
    }),
  );
  const domain = {
    ...typed.domain,
    ...(typed.domain.chainId !== undefined ? { chainId: Number(typed.domain.chainId) } : {}),
  };
  return { domain, types, primaryType: typed.primaryType, message } as unknown as TypedDataDefinition;
}
