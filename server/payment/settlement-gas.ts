import { randomBytes } from "node:crypto";
import { createPublicClient, encodeFunctionData, getAddress, http, parseSignature, type PublicClient } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { authorizationTypes, eip3009ABI } from "@x402/evm";
import type { EvmNetwork } from "../../networks";
import { atomicToDecimal, decimalToAtomic, divideRoundingUp } from "../core/money";

export interface GasQuote {
  amount: bigint;
  display: {
    settlement_gas_units: string;
    gas_price_wei: string;
    gas_margin_percent: number;
    settlement_gas_usd: string;
  };
}

/**
 * The live cost of settling one payment on a network whose quotes include gas: the gas of a
 * transferWithAuthorization (measured once, on a zero-value authorization from a throwaway key, which runs the
 * same code as a payment) x the current gas price, plus the network's margin, in USDC atomic units, rounded up.
 */
export class SettlementGasEstimator {
  private readonly client: PublicClient;
  private gasUnits: Promise<bigint> | undefined;

  constructor(
    private readonly network: EvmNetwork & { settlementGas: NonNullable<EvmNetwork["settlementGas"]> },
    rpcUrl: string,
    private readonly payTo: string,
  ) {
    this.client = createPublicClient({ transport: http(rpcUrl) });
  }

  private async measureGasUnits(): Promise<bigint> {
    const signer = privateKeyToAccount(generatePrivateKey());
    const authorization = {
      from: signer.address,
      to: getAddress(this.payTo),
      value: 0n,
      validAfter: 0n,
      validBefore: BigInt(Math.floor(Date.now() / 1000) + 3600),
      nonce: `0x${randomBytes(32).toString("hex")}` as `0x${string}`,
    };
    const signature = await signer.signTypedData({
      domain: {
        ...this.network.usdc.eip712,
        chainId: this.network.chainId,
        verifyingContract: this.network.usdc.address,
      },
      types: authorizationTypes,
      primaryType: "TransferWithAuthorization",
      message: authorization,
    });
    const { v, r, s, yParity } = parseSignature(signature);
    return this.client.estimateGas({
      account: signer.address,
      to: this.network.usdc.address,
      data: encodeFunctionData({
        abi: eip3009ABI,
        functionName: "transferWithAuthorization",
        args: [
          authorization.from,
          authorization.to,
          0n,
          0n,
          authorization.validBefore,
          authorization.nonce,
          Number(v ?? BigInt(yParity + 27)),
          r,
          s,
        ],
      }),
    });
  }

  async estimate(): Promise<GasQuote> {
    this.gasUnits ??= this.measureGasUnits().catch((error: unknown) => {
      this.gasUnits = undefined;
      throw error;
    });
    const [units, gasPrice] = await Promise.all([this.gasUnits, this.client.getGasPrice()]);
    const { nativeDecimals, nativeUsd, marginPercent } = this.network.settlementGas;
    const decimals = this.network.usdc.decimals;
    const wei = (units * gasPrice * BigInt(100 + marginPercent)) / 100n;
    const amount = divideRoundingUp(wei * decimalToAtomic(nativeUsd, decimals), 10n ** BigInt(nativeDecimals));
    return {
      amount,
      display: {
        settlement_gas_units: units.toString(),
        gas_price_wei: gasPrice.toString(),
        gas_margin_percent: marginPercent,
        settlement_gas_usd: atomicToDecimal(amount, decimals),
      },
    };
  }
}
