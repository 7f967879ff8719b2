import {
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  isAddress,
  isBlockhash,
  isSignature,
  type Address,
} from "@solana/kit";
import { getMintDecoder, getTokenDecoder } from "@solana-program/token";
import { FailedTransactionMetadata, type LiteSVM } from "litesvm";
import type { SvmNetwork } from "../../networks";
import { atomicToDecimal } from "../../server/core/money";
import type { TokenBalance } from "./solana-accounts";
import type { LandedTransaction, LandedTransactions } from "./landed-transactions";

/** A JSON-RPC error answered to the caller, with Solana's codes. */
export class RpcError extends Error {
  constructor(
    public readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const INVALID_PARAMS = -32602;
const METHOD_NOT_FOUND = -32601;
/** What a real node answers when a transaction fails its preflight checks. */
const TRANSACTION_FAILED = -32002;
/** What a real node answers when getTransaction is asked for a v0 transaction by a legacy-only client. */
const UNSUPPORTED_TRANSACTION_VERSION = -32015;
/** Blocks a blockhash stays usable on Solana; the local validator's blockhash does not expire on its own. */
const BLOCKHASH_VALIDITY = 150n;
const SIGNATURES_LIMIT = 1000;

type Params = unknown[];

/**
 * The JSON-RPC methods the official x402 client and facilitator call, those a ledger reconciler calls (history
 * of an address, a transaction, a blockhash's validity), and a few that tools expect, answered from a LiteSVM
 * instance and the record of what it included, with the shapes of a Solana node. Numbers go out as JSON numbers;
 * the kit client turns them into bigints itself.
 */
export function solanaRpcMethods(svm: LiteSVM, network: SvmNetwork, transactions: LandedTransactions) {
  const slot = () => svm.getClock().slot;
  const context = () => ({ slot: Number(slot()), apiVersion: "2.2.0" });

  const accountInfo = (address: string, config: unknown) => {
    const encoding = (config as { encoding?: string } | undefined)?.encoding ?? "base64";
    if (encoding !== "base64") {
      throw new RpcError(INVALID_PARAMS, `encoding ${encoding} is not served by the local validator; use base64`);
    }
    const account = svm.getAccount(asAddress(address));
    if (!account.exists) return null;
    return {
      data: [getBase64Decoder().decode(account.data), "base64"],
      executable: account.executable,
      lamports: Number(account.lamports),
      owner: account.programAddress,
      rentEpoch: 0,
      space: account.data.length,
    };
  };

  // Transactions decoded with kit 5 go to litesvm, typed with kit 8: same shape ({ messageBytes, signatures }),
  // different brands, hence the `as never` where they are passed.
  const decodeTransaction = (wire: unknown) => {
    if (typeof wire !== "string") throw new RpcError(INVALID_PARAMS, "the transaction must be a base64 string");
    try {
      return getTransactionDecoder().decode(getBase64Encoder().encode(wire));
    } catch (error) {
      throw new RpcError(INVALID_PARAMS, `the transaction cannot be decoded: ${(error as Error).message}`);
    }
  };

  const methods: Record<string, (params: Params) => unknown> = {
    getHealth: () => "ok",
    getVersion: () => ({ "solana-core": "2.2.0-litesvm", "feature-set": 0 }),
    getGenesisHash: () => network.genesisHash,
    getSlot: () => Number(slot()),
    getBlockHeight: () => Number(slot()),
    getLatestBlockhash: () => ({
      context: context(),
      value: { blockhash: svm.latestBlockhash(), lastValidBlockHeight: Number(slot() + BLOCKHASH_VALIDITY) },
    }),
    getMinimumBalanceForRentExemption: ([size]) => Number(svm.minimumBalanceForRentExemption(BigInt(Number(size)))),
    getBalance: ([address]) => ({ context: context(), value: Number(svm.getBalance(asAddress(address)) ?? 0n) }),
    getAccountInfo: ([address, config]) => ({ context: context(), value: accountInfo(String(address), config) }),
    getMultipleAccounts: ([addresses, config]) => ({
      context: context(),
      value: (addresses as string[]).map((address) => accountInfo(address, config)),
    }),
    getTokenAccountBalance: ([address]) => {
      const account = svm.getAccount(asAddress(address));
      if (!account.exists) throw new RpcError(INVALID_PARAMS, "Invalid param: could not find account");
      const token = getTokenDecoder().decode(account.data);
      const mint = svm.getAccount(token.mint);
      const decimals = mint.exists ? getMintDecoder().decode(mint.data).decimals : 0;
      return { context: context(), value: uiTokenAmount(token.amount, decimals) };
    },
    simulateTransaction: ([wire, config]) => {
      const options = (config ?? {}) as { sigVerify?: boolean; replaceRecentBlockhash?: boolean };
      if (options.replaceRecentBlockhash) {
        throw new RpcError(INVALID_PARAMS, "replaceRecentBlockhash is not served by the local validator");
      }
      const transaction = decodeTransaction(wire);
      // A node simulates without checking signatures unless asked; the fee payer's slot is usually still empty.
      svm.withSigverify(options.sigVerify === true);
      let result;
      try {
        result = svm.simulateTransaction(transaction as never);
      } finally {
        svm.withSigverify(true);
      }
      const meta = result.meta();
      return {
        context: context(),
        value: {
          err: result instanceof FailedTransactionMetadata ? describeFailure(result) : null,
          logs: meta.logs(),
          accounts: null,
          unitsConsumed: Number(meta.computeUnitsConsumed()),
          returnData: null,
          innerInstructions: [],
        },
      };
    },
    sendTransaction: ([wire, config]) => {
      const transaction = decodeTransaction(wire);
      const [firstSignature] = Object.values(transaction.signatures);
      if (!firstSignature) throw new RpcError(TRANSACTION_FAILED, "Transaction is not signed by its fee payer");
      // As on a node: a transaction that fails its preflight is not sent; one sent without it may land failed.
      if ((config as { skipPreflight?: boolean } | undefined)?.skipPreflight !== true) {
        const preflight = svm.simulateTransaction(transaction as never);
        if (preflight instanceof FailedTransactionMetadata) throw simulationFailed(describeFailure(preflight));
      }
      const outcome = transactions.send(transaction);
      if ("message" in outcome) throw simulationFailed(outcome);
      return outcome.signature;
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((signature) => {
        const landed = transactions.get(signature);
        if (!landed) return null;
        return {
          slot: Number(landed.slot),
          confirmations: null,
          err: landed.err,
          status: status(landed),
          confirmationStatus: "finalized",
        };
      }),
    }),
    getSignaturesForAddress: ([address, config]) => {
      const { limit = SIGNATURES_LIMIT, before, until } = (config ?? {}) as Record<string, unknown>;
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > SIGNATURES_LIMIT) {
        throw new RpcError(INVALID_PARAMS, `Invalid limit; max ${SIGNATURES_LIMIT}`);
      }
      const found = transactions.history(asAddress(address), {
        limit,
        before: before === undefined ? undefined : asSignature(before),
        until: until === undefined ? undefined : asSignature(until),
      });
      return found.map((landed) => ({
        signature: landed.signature,
        slot: Number(landed.slot),
        err: landed.err,
        memo: null,
        blockTime: landed.blockTime,
        confirmationStatus: "finalized",
      }));
    },
    getTransaction: ([signature, config]) => {
      // The second parameter was once the encoding alone; nodes still accept that form.
      const options = (typeof config === "string" ? { encoding: config } : (config ?? {})) as {
        encoding?: string;
        maxSupportedTransactionVersion?: number;
      };
      const encoding = options.encoding ?? "json";
      if (encoding !== "base64") {
        throw new RpcError(INVALID_PARAMS, `encoding ${encoding} is not served by the local validator; use base64`);
      }
      const landed = transactions.get(asSignature(signature));
      if (!landed) return null;
      const supported = options.maxSupportedTransactionVersion;
      if (landed.version !== "legacy" && (supported === undefined || supported < landed.version)) {
        throw new RpcError(
          UNSUPPORTED_TRANSACTION_VERSION,
          `Transaction version (${landed.version}) is not supported by the requesting client. Please try the request again with the following configuration parameter: "maxSupportedTransactionVersion": ${landed.version}`,
        );
      }
      return {
        slot: Number(landed.slot),
        blockTime: landed.blockTime,
        ...(supported === undefined ? {} : { version: landed.version }),
        transaction: [landed.wire, "base64"],
        meta: transactionMeta(landed),
      };
    },
    // LiteSVM accepts a transaction whose blockhash is its latest one (or a durable nonce), nothing older.
    isBlockhashValid: ([blockhash]) => {
      if (typeof blockhash !== "string" || !isBlockhash(blockhash)) {
        throw new RpcError(INVALID_PARAMS, `Invalid param: ${String(blockhash)} is not a blockhash`);
      }
      return { context: context(), value: blockhash === svm.latestBlockhash() };
    },
  };

  return (method: string, params: Params): unknown => {
    const run = methods[method];
    if (!run) throw new RpcError(METHOD_NOT_FOUND, `Method not found: ${method} (local validator)`);
    return run(params);
  };
}

function asAddress(value: unknown): Address {
  if (typeof value !== "string" || !isAddress(value)) {
    throw new RpcError(INVALID_PARAMS, `Invalid param: ${String(value)} is not a base58 address`);
  }
  return value as Address;
}

function asSignature(value: unknown): string {
  if (typeof value !== "string" || !isSignature(value)) {
    throw new RpcError(INVALID_PARAMS, `Invalid param: ${String(value)} is not a base58 signature`);
  }
  return value;
}

function describeFailure(failure: FailedTransactionMetadata): { message: string; logs: string[] } {
  return { message: failure.toString(), logs: failure.meta().logs() };
}

function simulationFailed(failure: { message: string; logs: string[] }): RpcError {
  return new RpcError(TRANSACTION_FAILED, `Transaction simulation failed: ${JSON.stringify(failure)}`);
}

function status(landed: LandedTransaction) {
  return landed.err === null ? { Ok: null } : { Err: landed.err };
}

/** A token amount as nodes write it: the decimal string without trailing zeros ("1.5", "0"). */
function uiTokenAmount(amount: bigint, decimals: number) {
  const decimal = atomicToDecimal(amount, decimals);
  const uiAmountString = decimal.includes(".") ? decimal.replace(/\.?0+$/, "") : decimal;
  return { amount: amount.toString(), decimals, uiAmount: Number(uiAmountString), uiAmountString };
}

function transactionMeta(landed: LandedTransaction) {
  const tokenBalance = ({ accountIndex, mint, owner, programId, amount, decimals }: TokenBalance) => ({
    accountIndex,
    mint,
    owner,
    programId,
    uiTokenAmount: uiTokenAmount(amount, decimals),
  });
  return {
    err: landed.err,
    status: status(landed),
    fee: Number(landed.fee),
    preBalances: landed.preBalances.map(Number),
    postBalances: landed.postBalances.map(Number),
    innerInstructions: landed.innerInstructions,
    logMessages: landed.logMessages,
    preTokenBalances: landed.preTokenBalances.map(tokenBalance),
    postTokenBalances: landed.postTokenBalances.map(tokenBalance),
    rewards: [],
    loadedAddresses: landed.loadedAddresses,
    computeUnitsConsumed: Number(landed.computeUnitsConsumed),
  };
}
