import type { LimitRule, LimitUse } from "./limit-log";

/** Seconds until the limit that refused a call has room for it (at least 1). */
export function retryAfterSeconds(use: LimitUse): number {
  return Math.max(1, Math.ceil(use.waitMs / 1000));
}

/**
 * OpenAI's rate-limit headers for the limits in force: x-ratelimit-limit-requests, -remaining-requests and
 * -reset-requests (how long until one more request has room, as "12s"), and the `-tokens` trio.
 */
export function limitHeaders(rule: LimitRule, use: LimitUse): Record<string, string> {
  const headers: Record<string, string> = {};
  const reset = `${Math.ceil(use.requestsResetMs / 1000)}s`;
  if (rule.requestsPerMinute > 0) {
    headers["x-ratelimit-limit-requests"] = String(rule.requestsPerMinute);
    headers["x-ratelimit-remaining-requests"] = String(Math.max(0, rule.requestsPerMinute - use.requests));
    headers["x-ratelimit-reset-requests"] = reset;
  }
  if (rule.tokensPerMinute > 0) {
    headers["x-ratelimit-limit-tokens"] = String(rule.tokensPerMinute);
    headers["x-ratelimit-remaining-tokens"] = String(Math.max(0, rule.tokensPerMinute - use.tokens));
    headers["x-ratelimit-reset-tokens"] = reset;
  }
  return headers;
}

/** The x-ratelimit headers of a refusal for too many requests at once (provider-share.ts): the most, none left. */
export function atOnceHeaders(most: number): Record<string, string> {
  return { "x-ratelimit-limit-requests": String(most), "x-ratelimit-remaining-requests": "0" };
}
