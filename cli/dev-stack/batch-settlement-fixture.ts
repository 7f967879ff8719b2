// What the chain-level test of x402 `batch-settlement` stands on: the embedded chain with our channel contract and
// collectors, the official facilitator scheme of @x402/evm (a viem wallet signer, as the built-in facilitator
// builds it, and a receiver-authorizer key that signs claim batches and refunds), the official server scheme to
// build the 402, and official clients whose server is played by `pay`.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { x402Client } from "@x402/core/client";
import { x402Facilitator } from "@x402/core/facilitator";
import { x402ResourceServer } from "@x402/core/server";
import type {
  PaymentPayload,
  PaymentRequired,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
} from "@x402/core/types";
import { BATCH_SETTLEMENT_ADDRESS, PERMIT2_ADDRESS, toClientEvmSigner, toFacilitatorEvmSigner } from "@x402/evm";
import {
  BatchSettlementEvmScheme as BatchClientScheme,
  InMemoryClientChannelStorage,
  updateChannelFromSettle,
} from "@x402/evm/batch-settlement/client";
import { BatchSettlementEvmScheme as BatchFacilitatorScheme } from "@x402/evm/batch-settlement/facilitator";
import { BatchSettlementEvmScheme as BatchServerScheme } from "@x402/evm/batch-settlement/server";
import { declareEip2612GasSponsoringExtension } from "@x402/extensions";
import {
  BaseError,
  ContractFunctionRevertedError,
  createPublicClient,
  createTestClient,
  createWalletClient,
  http,
  maxUint256,
  publicActions,
  type Abi,
  type PublicClient,
  type TestClient,
} from "viem";
import { privateKeyToAccount } from "viem/accounts";
import type { EvmNetwork } from "../../networks";
import { FACILITATOR_ACCOUNT_INDEX, PAY_TO_ACCOUNT_INDEX, devAccount } from "./dev-accounts";
import { localBatchSettlementAbi, localUsdcAbi, startLocalChain, type LocalChain } from "./local-chain";

/** Receiver authorizer: a key of its own (index 10 of the development mnemonic), with no funds. */
const AUTHORIZER_ACCOUNT_INDEX = 10;
/** The channels' withdraw delay: the scheme's minimum, 15 minutes. */
export const WITHDRAW_DELAY = 900;

export type AssetTransferMethod = "eip3009" | "permit2";

export interface BatchFixture {
  chain: LocalChain;
  publicClient: PublicClient;
  testClient: TestClient;
  facilitator: x402Facilitator;
  authorizer: Account;
  /** A 402 offering `batch-settlement` at `price` per request, built by the official server scheme. */
  paymentRequired(
    price: bigint,
    method: AssetTransferMethod,
    sponsored?: boolean,
  ): Promise<{ requirements: PaymentRequirements; paymentRequired: PaymentRequired }>;
  /** A server-authored payload (claim, settle or refund) settled by the facilitator. */
  manage(payload: Record<string, unknown>, requirements: PaymentRequirements): Promise<SettleResponse>;
  /** A view of the channel contract. */
  view(functionName: string, args: readonly unknown[]): Promise<unknown>;
  /** A transaction to the channel contract (or, with `target`, to USDC) sent and landed by `account`. */
  send(account: Account, functionName: string, args: readonly unknown[], target?: "usdc"): Promise<void>;
  usdcOf(address: `0x${string}`): Promise<bigint>;
  /** `channels(channelId)`: [balance, totalClaimed]. */
  channel(channelId: `0x${string}`): Promise<bigint[]>;
  /** `receivers(payTo, USDC)`: [totalClaimed, totalSettled]. */
  receiver(): Promise<bigint[]>;
  stop(): Promise<void>;
}

type Account = ReturnType<typeof privateKeyToAccount>;

export async function startBatchFixture(network: EvmNetwork): Promise<BatchFixture> {
  const chain = await startLocalChain(network, 0);
  const transport = http(chain.rpcUrl);
  const publicClient = createPublicClient({ chain: chain.chain, transport, pollingInterval: 50 }) as PublicClient;
  const testClient = createTestClient({ chain: chain.chain, mode: "anvil", transport });
  const account = privateKeyToAccount(devAccount(FACILITATOR_ACCOUNT_INDEX).privateKey);
  const wallet = createWalletClient({ account, chain: chain.chain, transport, pollingInterval: 50 }).extend(
    publicActions,
  );
  // As cli/lib/facilitator-server.ts does: viem's verifyTypedData overloads are wider than the declared signer type.
  type SignerClient = Parameters<typeof toFacilitatorEvmSigner>[0];
  const signer = toFacilitatorEvmSigner({ ...wallet, address: account.address } as unknown as SignerClient);
  const authorizer = privateKeyToAccount(devAccount(AUTHORIZER_ACCOUNT_INDEX).privateKey);
  const facilitator = new x402Facilitator().register(network.id, new BatchFacilitatorScheme(signer, authorizer));

  const server = new x402ResourceServer({
    verify: (payload, requirements) => facilitator.verify(payload, requirements),
    settle: (payload, requirements) => facilitator.settle(payload, requirements),
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  }).register(
    network.id,
    new BatchServerScheme(devAccount(PAY_TO_ACCOUNT_INDEX).address, { withdrawDelay: WITHDRAW_DELAY }),
  );
  await server.initialize();

  const view = (functionName: string, args: readonly unknown[]) =>
    publicClient.readContract({ address: BATCH_SETTLEMENT_ADDRESS, abi: localBatchSettlementAbi, functionName, args });
  return {
    chain,
    publicClient,
    testClient,
    facilitator,
    authorizer,
    async paymentRequired(price, method, sponsored = false) {
      const [requirements] = await server.buildPaymentRequirements({
        scheme: "batch-settlement",
        network: network.id,
        payTo: devAccount(PAY_TO_ACCOUNT_INDEX).address,
        maxTimeoutSeconds: 300,
        price: {
          amount: price.toString(),
          asset: network.usdc.address,
          extra: { ...network.usdc.eip712, ...(method === "permit2" ? { assetTransferMethod: "permit2" } : {}) },
        },
      });
      const resource = { url: "http://paysvc.test/v1/chat/completions", description: "chat", mimeType: "" };
      const extensions = sponsored ? declareEip2612GasSponsoringExtension() : undefined;
      const paymentRequired = await server.createPaymentRequiredResponse([requirements!], resource, "", extensions);
      return { requirements: requirements!, paymentRequired };
    },
    manage: (payload, requirements) =>
      facilitator.settle({ x402Version: 2, accepted: requirements, payload }, requirements),
    view,
    async send(from, functionName, args, target) {
      const sender = createWalletClient({ account: from, chain: chain.chain, transport });
      const [address, abi] = target
        ? [network.usdc.address, localUsdcAbi]
        : [BATCH_SETTLEMENT_ADDRESS, localBatchSettlementAbi];
      const hash = await sender.writeContract({ address, abi, functionName, args });
      const receipt = await publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`${functionName} reverted`);
    },
    usdcOf: (address) =>
      publicClient.readContract({
        ...{ address: network.usdc.address, abi: localUsdcAbi },
        ...{ functionName: "balanceOf", args: [address] },
      }) as Promise<bigint>,
    channel: (channelId) => view("channels", [channelId]) as Promise<bigint[]>,
    receiver: () =>
      view("receivers", [devAccount(PAY_TO_ACCOUNT_INDEX).address, network.usdc.address]) as Promise<bigint[]>,
    stop: () => chain.stop(),
  };
}

/** A payer's Permit2 approval of USDC, the classic way (the payer pays the gas). */
export const approvePermit2 = (fx: BatchFixture, account: Account) =>
  fx.send(account, "approve", [PERMIT2_ADDRESS, maxUint256], "usdc");

/**
 * A payer with the official batch-settlement client (its own channel storage). `pay` plays one paid request: the
 * client signs, the facilitator verifies (and lands a deposit), and the payer records the charge as a server's
 * payment response would tell it.
 */
export class BatchPayer {
  readonly storage = new InMemoryClientChannelStorage();
  readonly account: Account;
  readonly client: x402Client;

  constructor(index: number, publicClient: PublicClient, network: EvmNetwork) {
    this.account = privateKeyToAccount(devAccount(index).privateKey);
    const scheme = new BatchClientScheme(toClientEvmSigner(this.account, publicClient), { storage: this.storage });
    this.client = new x402Client().register(network.id, scheme);
  }

  async pay(
    facilitator: x402Facilitator,
    { requirements, paymentRequired }: { requirements: PaymentRequirements; paymentRequired: PaymentRequired },
  ): Promise<{ payload: PaymentPayload; payment: BatchPayment; verified: boolean; settled?: SettleResponse }> {
    const payload = await this.client.createPaymentPayload(paymentRequired);
    const payment = payload.payload as unknown as BatchPayment;
    const verified = (await facilitator.verify(payload, requirements)).isValid;
    const settled = payment.type === "deposit" ? await facilitator.settle(payload, requirements) : undefined;
    if (verified && (settled === undefined || settled.success)) {
      await updateChannelFromSettle(this.storage, {
        server: { chargedAmount: requirements.amount },
        local: {
          channelId: payment.voucher.channelId,
          requestAmount: requirements.amount,
          depositAmount: payment.deposit?.amount,
        },
      });
    }
    return { payload, payment, verified, settled };
  }
}

export interface ChannelConfigFields {
  payer: `0x${string}`;
  payerAuthorizer: `0x${string}`;
  receiver: `0x${string}`;
  receiverAuthorizer: `0x${string}`;
  token: `0x${string}`;
  withdrawDelay: number;
  salt: `0x${string}`;
}

/** The fields of the client's deposit and voucher payloads this test reads. */
export interface BatchPayment {
  type: "deposit" | "voucher";
  channelConfig: ChannelConfigFields;
  voucher: { channelId: `0x${string}`; maxClaimableAmount: string; signature: `0x${string}` };
  deposit?: { amount: string; authorization: Record<string, { signature: `0x${string}` } | undefined> };
}

/** One row of a claim as the server's channel manager sends it to the facilitator (`onChain`: as the contract takes
 * it), claiming `total` of the payment's voucher. */
export function claimRow(payment: BatchPayment, total: bigint, onChain = false) {
  const { channelConfig: channel, voucher } = payment;
  return onChain
    ? {
        voucher: { channel, maxClaimableAmount: BigInt(voucher.maxClaimableAmount) },
        signature: voucher.signature,
        totalClaimed: total,
      }
    : {
        voucher: { channel, maxClaimableAmount: voucher.maxClaimableAmount },
        signature: voucher.signature,
        totalClaimed: total.toString(),
      };
}

/** The items of `theirs` (an ABI) that `ours` lacks, compared whatever their key order and without solc's
 * `internalType`s. */
export function abiItemsMissing(ours: readonly unknown[], theirs: readonly unknown[]): unknown[] {
  const key = (item: unknown) => JSON.stringify(item, sortedKeys);
  const present = new Set(ours.map(key));
  return theirs.filter((item) => !present.has(key(item)));
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  const entries = Object.entries(value).filter(([key]) => key !== "internalType");
  return Object.fromEntries(entries.sort(([a], [b]) => a.localeCompare(b)));
}

/** The name of the custom error a simulated call of the channel contract reverts with, or "no revert". */
export async function revertOf(
  publicClient: PublicClient,
  from: `0x${string}`,
  address: `0x${string}`,
  functionName: string,
  args: readonly unknown[],
): Promise<string> {
  try {
    await publicClient.simulateContract({ account: from, address, abi: localBatchSettlementAbi, functionName, args });
  } catch (error) {
    const reverted = error instanceof BaseError ? error.walk((e) => e instanceof ContractFunctionRevertedError) : null;
    return (reverted as ContractFunctionRevertedError | null)?.data?.errorName ?? String(error);
  }
  return "no revert";
}

/**
 * The ABI @x402/evm 2.27 calls the channel contract with (`batchSettlementABI`, which the package does not export):
 * read from the chunk its facilitator entry imports it from.
 */
export async function sdkBatchSettlementAbi(): Promise<Abi> {
  const require = createRequire(import.meta.url);
  const cjsEntry = require.resolve("@x402/evm/batch-settlement/facilitator");
  const esmEntry = cjsEntry.replace(/dist[/\\]cjs[/\\](.*)\.js$/, "dist/esm/$1.mjs");
  const chunk = /import \{\s*batchSettlementABI,[^}]*\} from "([^"]+)"/.exec(readFileSync(esmEntry, "utf8"))?.[1];
  if (!chunk) throw new Error(`batchSettlementABI is no longer imported by ${esmEntry}`);
  const loaded = (await import(pathToFileURL(join(dirname(esmEntry), chunk)).href)) as { batchSettlementABI: Abi };
  return loaded.batchSettlementABI;
}
