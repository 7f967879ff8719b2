import type { NetworkDefinition } from "../../networks";
import type { Quote } from "./quote";
import { quoteTokens } from "./quote-tokens";

/**
 * The input tokens a call billed in tokens is charged: the quote's count, or the provider's where it reported more (its
 * formula for an image, or input the quote could not see, differs from ours). The charge it goes in stays capped at
 * what was reserved or signed for.
 */
export function chargedInput(counted: number, reported: number | undefined): number {
  return reported !== undefined && reported > counted ? reported : counted;
}

/**
 * What an `upto` payment settles for the tokens a call used: the quote's formula (counted input at the input rate, plus
 * output at the output rate, plus the settlement overhead, at least the minimum charge, rounded up once) with the
 * output tokens the upstream reported in place of the cap; output not reported is charged as the cap; input the
 * provider reported above the count is charged as reported (chargedInput). Live
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
  /** The input tokens the provider reported, where it did: charged in place of the quote's count when more. */
  reportedInput?: number;
  network: NetworkDefinition;
}): bigint {
  const { tokens, quoted, maximum, outputTokens, network } = options;
  const output =
    outputTokens === undefined || !Number.isInteger(outputTokens) || outputTokens < 0
      ? tokens.maxOutput
      : Math.min(outputTokens, tokens.maxOutput);
  const inputTokens = chargedInput(tokens.input, options.reportedInput);
  const used = quoteTokens({ model: tokens.model, inputTokens, maxOutputTokens: output, network }).amount;
  const charge = used + (maximum - quoted);
  return charge < maximum ? charge : maximum;
}
