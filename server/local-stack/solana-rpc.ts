import {
  getBase58Decoder,
  getBase64Decoder,
  getBase64Encoder,
  getTransactionDecoder,
  isAddress,
  type Address,
} from "@solana/kit";
import { getMintDecoder, getTokenDecoder } from "@solana-program/token";
import { FailedTransactionMetadata, type LiteSVM } from "litesvm";
import type { SvmNetwork } from "../../networks";
import { atomicToDecimal } from "../money";

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
/** Blocks a blockhash stays usable on Solana; the local validator's blockhash does not expire on its own. */
const BLOCKHASH_VALIDITY = 150n;

type Params = unknown[];
interface TransactionStatus {
  slot: bigint;
  err: unknown;
}

/**
 * The JSON-RPC methods the official x402 client and facilitator call (plus a few that tools expect), answered
 * from a LiteSVM instance with the shapes of a Solana node. Numbers go out as JSON numbers; the kit client turns
 * them into bigints itself.
 */
export function solanaRpcMethods(svm: LiteSVM, network: SvmNetwork) {
  const statuses = new Map<string, TransactionStatus>();
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
      const amount = token.amount.toString();
      const uiAmountString = atomicToDecimal(token.amount, decimals);
      return {
        context: context(),
        value: { amount, decimals, uiAmount: Number(uiAmountString), uiAmountString },
      };
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
    sendTransaction: ([wire]) => {
      const transaction = decodeTransaction(wire);
      const [firstSignature] = Object.values(transaction.signatures);
      if (!firstSignature) throw new RpcError(TRANSACTION_FAILED, "Transaction is not signed by its fee payer");
      const signature = getBase58Decoder().decode(firstSignature);
      const result = svm.sendTransaction(transaction as never);
      if (result instanceof FailedTransactionMetadata) {
        throw new RpcError(
          TRANSACTION_FAILED,
          `Transaction simulation failed: ${JSON.stringify(describeFailure(result))}`,
        );
      }
      statuses.set(signature, { slot: slot(), err: null });
      // Each transaction lands in its own slot, as on a live cluster, so later reads see a later slot.
      svm.warpToSlot(slot() + 1n);
      return signature;
    },
    getSignatureStatuses: ([signatures]) => ({
      context: context(),
      value: (signatures as string[]).map((signature) => {
        const status = statuses.get(signature);
        if (!status) return null;
        return {
          slot: Number(status.slot),
          confirmations: null,
          err: status.err,
          status: status.err ? { Err: status.err } : { Ok: null },
          confirmationStatus: "finalized",
        };
      }),
    }),
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

function describeFailure(failure: FailedTransactionMetadata): unknown {
  return { message: failure.toString(), logs: failure.meta().logs() };
}
