import {
  createPublicClient,
  getAddress,
  http,
  isHash,
  parseAbi,
  parseEventLogs,
  type Hash,
  type PublicClient,
} from "viem";
import type { EvmNetwork } from "../../networks";
import type { DecodedPayment } from "../payment/payment-signature";
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

interface Authorization {
  from: `0x${string}`;
  validBefore: string;
  nonce: `0x${string}`;
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
    return {
      state: "transferred",
      transaction: hash,
      from: payer,
      to: transfer.args.to.toLowerCase(),
      amount: transfer.args.value,
    };
  }

  /** Unused: expired once the chain's time (or, on an idle chain, ours well after) reaches validBefore. */
  private async unused(authorization: Authorization): Promise<ChainPayment> {
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
