import type { LimitRule } from "../server/limits/limit-log";

/** The rate limits in force for each kind of payer (RATE_LIMIT_* settings); a limit of 0 is off. */
export interface RateLimitSettings {
  key: LimitRule;
  wallet: LimitRule;
}

export function rateLimitSettings(values: {
  RATE_LIMIT_KEY_RPM: number;
  RATE_LIMIT_KEY_TPM: number;
  RATE_LIMIT_KEY_CONCURRENT: number;
  RATE_LIMIT_WALLET_RPM: number;
  RATE_LIMIT_WALLET_CONCURRENT: number;
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
  };
}
