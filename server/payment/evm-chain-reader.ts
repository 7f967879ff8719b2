import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from "@x402/evm";
import {
  createPublicClient,
  decodeFunctionData,
  getAddress,
  http,
  isHash,
  parseAbi,
  parseEventLogs,
  type Hash,
  type PublicClient,
} from "viem";
import type { EvmNetwork } from "../../networks";
import type { DecodedPayment } from "./payment-signature";
import type { ChainPayment, ChainReader } from "./chain-payment";

const eip3009 = parseAbi([
  "function authorizationState(address authorizer, bytes32 nonce) view returns (bool)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
  "event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)",
  "event Transfer(address indexed from, address indexed to, uint256 value)",
]);

/** How far before a payment reached us its transfer is looked for (validAfter is usually 10 minutes back). */
const SEARCH_MARGIN_SECONDS = 600n;
/**
 * A chain that makes no block for this long past validBefore has none left that could use the authorization
 * (a block made later carries a later time); an idle local chain makes blocks only for transactions.
 */
const IDLE_CHAIN_GRACE_SECONDS = 60n;

const permit2 = parseAbi(["function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)"]);

interface Authorization {
  from: `0x${string}`;
  validBefore: string;
  nonce: `0x${string}`;
}

/** An `upto` payment's Permit2 authorization, as its payload carries it. */
interface Permit2Authorization {
  from: `0x${string}`;
  nonce: string;
  deadline: string;
}

/**
 * EIP-3009 payments on an EVM chain: the token's authorizationState tells whether the authorization was used;
 * its AuthorizationUsed log names the transaction, whose Transfer from the payer says to whom and how much.
 */
export class EvmChainReader implements ChainReader {
  private readonly client: PublicClient;

  constructor(
    private readonly network: EvmNetwork,
    rpcUrl: string,
  ) {
    this.client = createPublicClient({ transport: http(rpcUrl, { retryCount: 1 }) });
  }

  async recipientOf(payTo: string): Promise<string> {
    return payTo.toLowerCase();
  }

  async find(payment: DecodedPayment, recorded: string | null, since: Date): Promise<ChainPayment> {
    const token = getAddress(payment.asset);
    const { permit2Authorization } = payment.payload.payload as { permit2Authorization?: Permit2Authorization };
    if (permit2Authorization) return this.findPermit2(permit2Authorization, token, recorded, since);
    const authorization = payment.payload.payload.authorization as Authorization;
    if (recorded && isHash(recorded)) {
      const found = await this.transferIn(recorded, token, authorization);
      if (found) return found;
    }
    const used = await this.client.readContract({
      address: token,
      abi: eip3009,
      functionName: "authorizationState",
      args: [authorization.from, authorization.nonce],
    });
    if (!used) return this.unused(authorization);
    const fromBlock = await this.searchStart(since);
    const logsOf = (event: (typeof eip3009)[1] | (typeof eip3009)[2]) =>
      this.client.getLogs({
        address: token,
        event,
        args: { authorizer: authorization.from, nonce: authorization.nonce },
        fromBlock,
        toBlock: "latest",
      });
    for (const log of await logsOf(eip3009[1])) {
      const found = await this.transferIn(log.transactionHash, token, authorization);
      if (found) return found;
    }
    const [canceled] = await logsOf(eip3009[2]);
    if (canceled) {
      return { state: "void", reason: "the payer cancelled the authorization", transaction: canceled.transactionHash };
    }
    throw new Error(
      `authorization ${authorization.nonce} of ${authorization.from} is used, but no transfer using it was found since ${since.toISOString()}`,
    );
  }

  /** The transfer a transaction made with this authorization: the payer's Transfer that follows its use. */
  private async transferIn(hash: Hash, token: string, authorization: Authorization): Promise<ChainPayment | undefined> {
    const receipt = await this.client.getTransactionReceipt({ hash }).catch((error: unknown) => {
      if ((error as Error).name === "TransactionReceiptNotFoundError") return undefined;
      throw error;
    });
    if (!receipt || receipt.status !== "success") return undefined;
    const logs = parseEventLogs({ abi: eip3009, logs: receipt.logs }).filter(
      (log) => log.address.toLowerCase() === token.toLowerCase(),
    );
    const payer = authorization.from.toLowerCase();
    const use = logs.find(
      (log) =>
        log.eventName === "AuthorizationUsed" &&
        log.args.authorizer.toLowerCase() === payer &&
        log.args.nonce.toLowerCase() === authorization.nonce.toLowerCase(),
    );
    if (!use) return undefined;
    const transfer = logs.find(
      (log) => log.eventName === "Transfer" && log.logIndex > use.logIndex && log.args.from.toLowerCase() === payer,
    );
    if (!transfer || transfer.eventName !== "Transfer") return undefined;
    return transferred(hash, payer, transfer.args);
  }

  /**
   * An `upto` payment: Permit2's bitmap tells whether its nonce was used; the transaction that used it is a call of
   * the upto proxy naming this payer and nonce, whose Transfer from the payer says to whom and how much (the proxy
   * and Permit2 log nothing that names the nonce, so the calls are read).
   */
  private async findPermit2(
    authorization: Permit2Authorization,
    token: `0x${string}`,
    recorded: string | null,
    since: Date,
  ): Promise<ChainPayment> {
    if (recorded && isHash(recorded)) {
      const found = await this.permit2TransferIn(recorded, token, authorization);
      if (found) return found;
    }
    const nonce = BigInt(authorization.nonce);
    const word = await this.client.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2,
      functionName: "nonceBitmap",
      args: [authorization.from, nonce >> 8n],
    });
    if (((word >> (nonce & 255n)) & 1n) === 0n) return this.unused({ validBefore: authorization.deadline });
    const transfers = await this.client.getLogs({
      address: token,
      event: eip3009[3],
      args: { from: authorization.from },
      fromBlock: await this.searchStart(since),
      toBlock: "latest",
    });
    for (const log of transfers) {
      const found = await this.permit2TransferIn(log.transactionHash, token, authorization);
      if (found) return found;
    }
    throw new Error(
      `Permit2 nonce ${authorization.nonce} of ${authorization.from} is used, but no upto settlement using it was found since ${since.toISOString()}`,
    );
  }

  /** The transfer a transaction made with this Permit2 authorization: a call of the upto proxy with its nonce. */
  private async permit2TransferIn(
    hash: Hash,
    token: string,
    authorization: Permit2Authorization,
  ): Promise<ChainPayment | undefined> {
    const [transaction, receipt] = await Promise.all([
      this.client.getTransaction({ hash }),
      this.client.getTransactionReceipt({ hash }),
    ]).catch((error: unknown) => {
      if (/NotFoundError$/.test((error as Error).name)) return [undefined, undefined] as const;
      throw error;
    });
    if (!transaction || !receipt || receipt.status !== "success") return undefined;
    if (transaction.to?.toLowerCase() !== x402UptoPermit2ProxyAddress.toLowerCase()) return undefined;
    let call;
    try {
      call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: transaction.input });
    } catch {
      return undefined;
    }
    // settle(permit, amount, owner, witness, signature) or settleWithPermit(permit2612, permit, amount, owner, ...).
    const args = (call.functionName === "settleWithPermit" ? call.args.slice(1) : call.args) as readonly unknown[];
    const [permit, , owner] = args as [{ nonce: bigint }, bigint, string];
    const payer = authorization.from.toLowerCase();
    if (permit.nonce !== BigInt(authorization.nonce) || owner.toLowerCase() !== payer) return undefined;
    const transfer = parseEventLogs({ abi: eip3009, logs: receipt.logs }).find(
      (log) =>
        log.eventName === "Transfer" &&
        log.address.toLowerCase() === token.toLowerCase() &&
        log.args.from.toLowerCase() === payer,
    );
    if (!transfer || transfer.eventName !== "Transfer") return undefined;
    return transferred(hash, payer, transfer.args);
  }

  /** Unused: expired once the chain's time (or, on an idle chain, ours well after) reaches validBefore. */
  private async unused(authorization: Pick<Authorization, "validBefore">): Promise<ChainPayment> {
    const validBefore = BigInt(authorization.validBefore);
    const latest = await this.client.getBlock({ blockTag: "latest" });
    const now = BigInt(Math.floor(Date.now() / 1000));
    const expired = latest.timestamp >= validBefore || now >= validBefore + IDLE_CHAIN_GRACE_SECONDS;
    return { state: "unused", expired, validUntil: new Date(Number(validBefore) * 1000) };
  }

  /**
   * The first block worth searching: the chain's blocks back to a while before the payment, counted at the
   * network's block time (twice over, as blocks can come slower); never the whole chain of a live network.
   */
  private async searchStart(since: Date): Promise<bigint> {
    const latest = await this.client.getBlock({ blockTag: "latest" });
    const seconds = latest.timestamp - BigInt(Math.floor(since.getTime() / 1000)) + SEARCH_MARGIN_SECONDS;
    const blocks = (2n * (seconds > 0n ? seconds : 0n) * 1000n) / BigInt(this.network.blockTimeMs) + 10n;
    return latest.number > blocks ? latest.number - blocks : 0n;
  }
}

/** A transaction's transfer from the payer, as the ledger is checked against it. */
function transferred(hash: Hash, payer: string, transfer: { to: string; value: bigint }): ChainPayment {
  return {
    state: "transferred",
    transaction: hash,
    from: payer,
    to: transfer.to.toLowerCase(),
    amount: transfer.value,
  };
}
