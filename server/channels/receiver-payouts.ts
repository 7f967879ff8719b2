import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";
import { createPublicClient, http, type Abi } from "viem";
import type { EvmNetwork } from "../../networks";
import { chainFor } from "../../networks/viem-chain";

/** The channel contract's account of a receiver in a token: all it ever claimed, and what `settle` sent it. */
const receiversAbi = [
  {
    type: "function",
    name: "receivers",
    stateMutability: "view",
    inputs: [
      { name: "receiver", type: "address" },
      { name: "token", type: "address" },
    ],
    outputs: [
      { name: "totalClaimed", type: "uint128" },
      { name: "totalSettled", type: "uint128" },
    ],
  },
] as const satisfies Abi;

/** What the channel contract holds for one receiver, in the network's USDC. */
export interface ReceiverPayout {
  receiver: string;
  /** Every claim of its channels, added up since the first. */
  claimed: bigint;
  /** What payouts (`settle`) have sent on to it of that. */
  paidOut: bigint;
  /**
   * Claimed and still in the contract: the receiver does not have it until a payout sends it. A claim (a refund's
   * included) only moves money from a channel to the receiver's account in the contract.
   */
  awaitingPayout: bigint;
}

/**
 * Reads what the channel contract holds for receivers. Claiming, refunds, the drain, reconciliation and the
 * operator's page all ask it, so they agree on what is still to be paid out.
 */
export class ReceiverPayouts {
  private readonly chain;

  constructor(
    private readonly network: EvmNetwork,
    chainRpcUrl: string,
    private readonly contract: `0x${string}` = BATCH_SETTLEMENT_ADDRESS,
  ) {
    this.chain = createPublicClient({
      chain: chainFor(network, chainRpcUrl),
      transport: http(chainRpcUrl, { retryCount: 1, timeout: 10_000 }),
    });
  }

  async read(receiver: string): Promise<ReceiverPayout> {
    const [claimed, paidOut] = await this.chain.readContract({
      address: this.contract,
      abi: receiversAbi,
      functionName: "receivers",
      args: [receiver as `0x${string}`, this.network.usdc.address as `0x${string}`],
    });
    return { receiver, claimed, paidOut, awaitingPayout: claimed - paidOut };
  }
}
