import { z } from "zod";
import type { LimitRule } from "../server/limits/limit-log";

/**
 * Limits as callers and catalogs write them, each optional: a key's buyer asks for lower ones at purchase; a chat
 * model of the catalog sets its own for keys and wallets (0: none).
 */
export const limitFields = (minimum: 0 | 1) =>
  z
    .object({
      requests_per_minute: z.number().int().min(minimum).max(1_000_000).optional(),
      tokens_per_minute: z.number().int().min(minimum).max(1_000_000_000).optional(),
      concurrent: z.number().int().min(minimum).max(10_000).optional(),
    })
    .strict();

export type LimitFields = z.infer<ReturnType<typeof limitFields>>;

/** A rule with the fields given replacing the rule's own. */
export function withFields(rule: LimitRule, fields: LimitFields | undefined): LimitRule {
  return {
    requestsPerMinute: fields?.requests_per_minute ?? rule.requestsPerMinute,
    tokensPerMinute: fields?.tokens_per_minute ?? rule.tokensPerMinute,
    concurrent: fields?.concurrent ?? rule.concurrent,
  };
}

/** The rate limits in force for each kind of payer (RATE_LIMIT_* settings); a limit of 0 is off. */
export interface RateLimitSettings {
  key: LimitRule;
  wallet: LimitRule;
  /** Unpaid quotes per caller address per minute, per instance (0: none counted). */
  quotesPerMinute: number;
}

export function rateLimitSettings(values: {
  RATE_LIMIT_KEY_RPM: number;
  RATE_LIMIT_KEY_TPM: number;
  RATE_LIMIT_KEY_CONCURRENT: number;
  RATE_LIMIT_WALLET_RPM: number;
  RATE_LIMIT_WALLET_CONCURRENT: number;
  RATE_LIMIT_QUOTE_RPM: number;
}): RateLimitSettings {
  return {
    key: {
      requestsPerMinute: values.RATE_LIMIT_KEY_RPM,
      tokensPerMinute: values.RATE_LIMIT_KEY_TPM,
      concurrent: values.RATE_LIMIT_KEY_CONCURRENT,
    },
    // A wallet pays per call with its own money: calls and concurrency are bounded, not tokens.
    wallet: {
      requestsPerMinute: values.RATE_LIMIT_WALLET_RPM,
      tokensPerMinute: 0,
      concurrent: values.RATE_LIMIT_WALLET_CONCURRENT,
    },
    quotesPerMinute: values.RATE_LIMIT_QUOTE_RPM,
  };
}
