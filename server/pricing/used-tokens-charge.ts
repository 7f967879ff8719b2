import type { NetworkDefinition } from "../../networks";
import type { Quote } from "../billing/payment-method";
import { quoteTokens } from "./quote-tokens";

/**
 * What an `upto` payment settles for the tokens a call used: the quote's formula (counted input at the input rate, plus
 * output at the output rate, plus the settlement overhead, at least the minimum charge, rounded up once) with the
 * output tokens the upstream reported in place of the cap; output not reported is charged as the cap. Live
 * settlement gas held with the quote (`maximum` over the quote's amount) is kept as quoted. Never above `maximum`,
 * the amount the payer signed for.
 */
export function usedTokensCharge(options: {
  tokens: NonNullable<Quote["tokens"]>;
  /** The quote's amount, without live gas. */
  quoted: bigint;
  /** What the payer signed for: the quote plus any live gas. */
  maximum: bigint;
  outputTokens: number | undefined;
  network: NetworkDefinition;
}): bigint {
  const { tokens, quoted, maximum, outputTokens, network } = options;
  const output =
    outputTokens === undefined || !Number.isInteger(outputTokens) || outputTokens < 0
      ? tokens.maxOutput
      : Math.min(outputTokens, tokens.maxOutput);
  const used = quoteTokens({ model: tokens.model, inputTokens: tokens.input, maxOutputTokens: output, network }).amount;
  const charge = used + (maximum - quoted);
  return charge < maximum ? charge : maximum;
}
