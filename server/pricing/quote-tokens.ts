import type { ChatModel } from "../../config/catalog/model-catalog";
import type { NetworkDefinition } from "../../networks";
import { atomicToDecimal, decimalToAtomic, divideRoundingUp } from "../core/money";
import { chargeFor, MINIMUM_CHARGE_USD } from "./charge";

export interface TokenQuote {
  /** The price in atomic units of the network's USDC. */
  amount: bigint;
  /** Display breakdown for `extensions.quote`; not needed to settle. */
  display: {
    model: string;
    input_tokens: number;
    max_output_tokens: number;
    input_usd_per_1m: string;
    output_usd_per_1m: string;
    input_usd: string;
    output_usd: string;
    settlement_overhead_usd: string;
    minimum_charge_usd: string;
    total_usd: string;
    amount: string;
    asset_decimals: number;
  };
}

const TOKENS_PER_RATE_UNIT = 1_000_000n;

/**
 * Input tokens at the input rate plus the output cap at the output rate plus the network's settlement overhead,
 * floored at the minimum charge and rounded up once to whole atomic units. All integer arithmetic.
 */
export function quoteTokens(options: {
  model: Pick<ChatModel, "id" | "inputUsdPerMillion" | "outputUsdPerMillion">;
  inputTokens: number;
  maxOutputTokens: number;
  network: NetworkDefinition;
}): TokenQuote {
  const { model, inputTokens, maxOutputTokens, network } = options;
  const decimals = network.usdc.decimals;
  // Rates in atomic units per 1M tokens; a token's cost is then that over 1M, kept exact until the final round.
  const inputRate = decimalToAtomic(model.inputUsdPerMillion, decimals);
  const outputRate = decimalToAtomic(model.outputUsdPerMillion, decimals);
  const inputScaled = BigInt(inputTokens) * inputRate;
  const outputScaled = BigInt(maxOutputTokens) * outputRate;
  const amount = chargeFor(divideRoundingUp(inputScaled + outputScaled, TOKENS_PER_RATE_UNIT), network);
  const exact = (scaled: bigint) => trimZeros(atomicToDecimal(scaled, decimals + 6));
  let display: TokenQuote["display"] | undefined;
  return {
    amount,
    // Written out when first read: a 402 shows it, a prepaid call never reads it.
    get display() {
      return (display ??= {
        model: model.id,
        input_tokens: inputTokens,
        max_output_tokens: maxOutputTokens,
        input_usd_per_1m: model.inputUsdPerMillion,
        output_usd_per_1m: model.outputUsdPerMillion,
        input_usd: exact(inputScaled),
        output_usd: exact(outputScaled),
        settlement_overhead_usd: network.settlementOverheadUsd,
        minimum_charge_usd: MINIMUM_CHARGE_USD,
        total_usd: atomicToDecimal(amount, decimals),
        amount: amount.toString(),
        asset_decimals: decimals,
      });
    },
  };
}

function trimZeros(value: string): string {
  return value.includes(".") ? value.replace(/\.?0+$/, "") : value;
}

/** A prepaid pack: its tokens at the model's input rate, plus the settlement fee, like any token quote. */
export function quotePrepaidPack(model: ChatModel, tokens: number, network: NetworkDefinition): TokenQuote {
  return quoteTokens({
    model: { ...model, outputUsdPerMillion: "0" },
    inputTokens: tokens,
    maxOutputTokens: 0,
    network,
  });
}
