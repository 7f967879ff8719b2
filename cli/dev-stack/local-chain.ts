import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import {
  BATCH_SETTLEMENT_ADDRESS,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  x402UptoPermit2ProxyAddress,
} from "@x402/evm";
import { createPublicClient, createTestClient, createWalletClient, http, type Abi, type Chain } from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { EvmNetwork } from "../../networks";
import { chainFor, MULTICALL3_ADDRESS } from "../../networks/viem-chain";
import usdcArtifact from "./contracts/local-usdc.artifact.json";
import multicallArtifact from "./contracts/multicall3.artifact.json";
import permit2Artifact from "./contracts/permit2.artifact.json";
import uptoProxyArtifact from "./contracts/x402-upto-permit2-proxy.artifact.json";
import batchSettlementArtifact from "./contracts/x402-batch-settlement.artifact.json";
import erc3009CollectorArtifact from "./contracts/erc3009-deposit-collector.artifact.json";
import permit2CollectorArtifact from "./contracts/permit2-deposit-collector.artifact.json";
import walletFactoryArtifact from "./contracts/owned-wallet-factory.artifact.json";
import {
  DEV_MNEMONIC,
  FACILITATOR_ACCOUNT_INDEX,
  PAYER_ACCOUNT_INDEXES,
  PAYER_STARTING_BALANCE,
  devAccount,
} from "./dev-accounts";
import { startGuardedProcess, type GuardedProcess } from "./guarded-process";
import { waitFor } from "./wait-for";

export const localUsdcAbi = usdcArtifact.abi as Abi;
export const localPermit2Abi = permit2Artifact.abi as Abi;
export const localBatchSettlementAbi = batchSettlementArtifact.abi as Abi;
/** Where @x402/evm 2.27's batch-settlement client and facilitator expect the Permit2 deposit collector (the package
 * uses this address but does not export it from its entry points). */
export const PERMIT2_DEPOSIT_COLLECTOR_ADDRESS = "0x4020425FAf3B746C082C2f942b4E5159887B0005";
/**
 * Our factory of contract wallets (OwnedWallets.sol): a payer may be a wallet it deployed (ERC-1271) or will deploy
 * (ERC-6492); the embedded facilitator may call it to deploy one as it settles.
 */
export const OWNED_WALLET_FACTORY_ADDRESS = "0x4020425FAf3B746c082c2F942b4E5159887B0006";
export const ownedWalletFactoryAbi = walletFactoryArtifact.abi as Abi;

export interface LocalChain {
  rpcUrl: string;
  chain: Chain;
  stop(): Promise<void>;
}

function anvilBinary(): string {
  // The platform package ships the binary; the wrapper package's install script (which only links it) may be
  // skipped by npm, so resolve the binary itself.
  const require = createRequire(import.meta.url);
  return require.resolve(
    `@foundry-rs/anvil-${process.platform}-${process.arch === "x64" ? "amd64" : process.arch}/bin/anvil`,
  );
}

/**
 * Starts anvil with the network's chain id, places our EIP-3009/EIP-2612 USDC at the network's canonical USDC
 * address, Multicall3, Permit2, the x402 `upto` Permit2 proxy and the x402 `batch-settlement` contracts (the
 * channel contract and its ERC-3009 and Permit2 deposit collectors) at their usual addresses, and funds the development
 * payers. With `stateFile`, the chain (its state, blocks and receipts) is loaded from that file when it exists, and
 * written back to it when anvil stops (SIGTERM or SIGINT; a chain killed outright loses what happened since it
 * started); a loaded chain keeps its balances and everything done with them, and gets the current code of any of our
 * contracts that it lacks or has in an older version.
 */
export async function startLocalChain(
  network: EvmNetwork,
  port: number,
  options: { stateFile?: string } = {},
): Promise<LocalChain> {
  const state = options.stateFile ? ["--state", options.stateFile] : [];
  if (options.stateFile) mkdirSync(dirname(options.stateFile), { recursive: true });
  // Not --silent: anvil prints the address it bound, which is how port 0 (any free port) is learned.
  const anvil = startGuardedProcess(
    anvilBinary(),
    [
      ...["--chain-id", String(network.chainId), "--port", String(port), "--host", "127.0.0.1"],
      ...["--mnemonic", DEV_MNEMONIC, ...state],
    ],
    { output: "pipe" },
  );
  try {
    const rpcUrl = await listeningUrl(anvil, port, options.stateFile);
    const chain = chainFor(network, rpcUrl);
    await waitForChain(rpcUrl, network.chainId);
    await placeContracts(network, rpcUrl, chain);
    return { rpcUrl, chain, stop: () => anvil.stop() };
  } catch (error) {
    await anvil.stop();
    throw error;
  }
}

/** Reads anvil's "Listening on 127.0.0.1:PORT" line, then keeps draining its log so the pipe never fills. */
function listeningUrl(anvil: GuardedProcess, port: number, stateFile: string | undefined): Promise<string> {
  return new Promise((resolve, reject) => {
    const output: string[] = [];
    anvil.child.stderr?.on("data", (chunk: Buffer) => output.push(chunk.toString()));
    const lines = createInterface({ input: anvil.child.stdout! });
    lines.on("line", (line) => {
      const match = /Listening on ([\d.]+):(\d+)/.exec(line);
      if (match) resolve(`http://${match[1]}:${match[2]}`);
    });
    void anvil.exited.then((code) => {
      const hint = [
        port === 0 ? "" : `; is port ${port} in use? Set LOCAL_CHAIN_PORT to a free port (0 picks one)`,
        stateFile && existsSync(stateFile)
          ? `; or its saved state ${stateFile} cannot be loaded: remove it to start a new chain`
          : "",
      ].join("");
      reject(new Error(`anvil exited at start (code ${code})${hint}: ${output.join("").trim().slice(-500)}`));
    });
  });
}

async function waitForChain(rpcUrl: string, chainId: number): Promise<void> {
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) });
  await waitFor(
    async () => {
      const reported = await client.getChainId().catch(() => undefined);
      if (reported !== undefined && reported !== chainId) {
        throw new Error(`${rpcUrl} answers with chain id ${reported}, not ${chainId}: another chain holds the port`);
      }
      return reported === chainId;
    },
    { timeoutMs: 15_000, what: `local chain at ${rpcUrl}` },
  );
}

/** Our contracts on the local chain: where each lives and the runtime code it has there. */
function localContracts(network: EvmNetwork): { address: `0x${string}`; code: `0x${string}` }[] {
  return [
    { address: network.usdc.address, code: usdcArtifact.runtimeBytecode as `0x${string}` },
    { address: MULTICALL3_ADDRESS, code: multicallArtifact.runtimeBytecode as `0x${string}` },
    { address: PERMIT2_ADDRESS, code: permit2Artifact.runtimeBytecode as `0x${string}` },
    { address: x402UptoPermit2ProxyAddress, code: uptoProxyArtifact.runtimeBytecode as `0x${string}` },
    { address: BATCH_SETTLEMENT_ADDRESS, code: batchSettlementArtifact.runtimeBytecode as `0x${string}` },
    { address: ERC3009_DEPOSIT_COLLECTOR_ADDRESS, code: erc3009CollectorArtifact.runtimeBytecode as `0x${string}` },
    { address: PERMIT2_DEPOSIT_COLLECTOR_ADDRESS, code: permit2CollectorArtifact.runtimeBytecode as `0x${string}` },
    { address: OWNED_WALLET_FACTORY_ADDRESS, code: walletFactoryArtifact.runtimeBytecode as `0x${string}` },
  ];
}

/**
 * Places each of our contracts whose code is missing or differs from its artifact (a chain saved by an older
 * version of this project lacks Permit2, the proxy and the batch-settlement contracts, and has a USDC without EIP-2612).
 * Replacing code keeps the contract's storage: the contracts' storage layouts only ever grow, so a saved USDC keeps its
 * balances. Permit2, the proxy and the batch-settlement contracts need no setup (no immutables, no initializer). USDC is set up (its minter named, the payers funded)
 * only where it was not there at all.
 */
async function placeContracts(network: EvmNetwork, rpcUrl: string, chain: Chain): Promise<void> {
  const transport = http(rpcUrl);
  const testClient = createTestClient({ chain, mode: "anvil", transport });
  const publicClient = createPublicClient({ chain, transport });
  const contracts = localContracts(network);
  const present = await Promise.all(contracts.map(({ address }) => publicClient.getCode({ address })));
  const usdcWasThere = present[0] !== undefined && present[0] !== "0x"; // USDC comes first
  for (const [index, { address, code }] of contracts.entries()) {
    if (present[index]?.toLowerCase() !== code.toLowerCase()) await testClient.setCode({ address, bytecode: code });
  }
  if (!usdcWasThere) await setUpUsdc(network, rpcUrl, chain);
}

async function setUpUsdc(network: EvmNetwork, rpcUrl: string, chain: Chain): Promise<void> {
  const transport = http(rpcUrl);
  const publicClient = createPublicClient({ chain, transport });
  const minter = privateKeyToAccount(devAccount(FACILITATOR_ACCOUNT_INDEX).privateKey);
  const wallet = createWalletClient({ account: minter, chain, transport });
  const usdc = network.usdc.address;

  const hashes = [
    await wallet.writeContract({
      address: usdc,
      abi: localUsdcAbi,
      functionName: "initialize",
      args: [minter.address],
    }),
  ];
  for (const index of PAYER_ACCOUNT_INDEXES) {
    hashes.push(
      await wallet.writeContract({
        address: usdc,
        abi: localUsdcAbi,
        functionName: "mint",
        args: [devAccount(index).address, PAYER_STARTING_BALANCE],
      }),
    );
  }
  for (const hash of hashes) {
    const receipt = await publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`local USDC setup transaction ${hash} reverted`);
  }
}
