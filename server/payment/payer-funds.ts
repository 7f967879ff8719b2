import { PERMIT2_ADDRESS } from "@x402/evm";
import { createPublicClient, erc20Abi, http, type Hex, type PublicClient } from "viem";
import type { NetworkDefinition } from "../../networks";

/** What a payer can pay, read on chain: its USDC balance and, where asked, what Permit2 may move of it. */
export interface PayerFunds {
  balance: bigint;
  /** The payer's USDC allowance to Permit2 (what an `upto` settlement spends). */
  permit2Allowance?: bigint;
  /** The payer's next EIP-2612 nonce: a sponsored permit signed with another one can no longer apply. */
  permitNonce?: bigint;
}

/** Where payers' funds are read: the chain (PayerFundsReader). */
export interface PayerFundsSource {
  /** The payer's funds, or undefined when they cannot be told (the caller then trusts nothing). */
  read(payer: string, options?: { permit2?: boolean; permitNonce?: boolean }): Promise<PayerFunds | undefined>;
}

const NONCES_ABI = [
  {
    type: "function",
    name: "nonces",
    stateMutability: "view",
    inputs: [{ name: "owner", type: "address" }],
    outputs: [{ type: "uint256" }],
  },
] as const;

/**
 * Reads payers' funds from the deployment's chain, the calls of one read batched into one JSON-RPC request. Only
 * EVM networks: on Solana it reads nothing (undefined), and a payment that would need it is served in strict order.
 */
export class PayerFundsReader implements PayerFundsSource {
  private client: PublicClient | undefined;

  constructor(
    private readonly network: NetworkDefinition,
    private readonly rpcUrl: string | undefined,
  ) {}

  async read(
    payer: string,
    options: { permit2?: boolean; permitNonce?: boolean } = {},
  ): Promise<PayerFunds | undefined> {
    const { network } = this;
    if (network.kind !== "evm" || !this.rpcUrl) return undefined;
    this.client ??= createPublicClient({
      transport: http(this.rpcUrl, { batch: true, retryCount: 0, timeout: 5_000 }),
    });
    const token = network.usdc.address;
    const owner = payer as Hex;
    try {
      const [balance, permit2Allowance, permitNonce] = await Promise.all([
        this.client.readContract({ address: token, abi: erc20Abi, functionName: "balanceOf", args: [owner] }),
        options.permit2
          ? this.client.readContract({
              address: token,
              abi: erc20Abi,
              functionName: "allowance",
              args: [owner, PERMIT2_ADDRESS as Hex],
            })
          : undefined,
        options.permitNonce
          ? this.client.readContract({ address: token, abi: NONCES_ABI, functionName: "nonces", args: [owner] })
          : undefined,
      ]);
      return { balance, permit2Allowance, permitNonce };
    } catch {
      return undefined;
    }
  }
}
