import { RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import type { LimitRule, LimitUse } from "./limit-log";

/** Seconds until the oldest call counted in the window leaves it (at least 1). */
export function retryAfterSeconds(use: LimitUse, now: number): number {
  if (use.oldestAt === undefined) return 1;
  return Math.max(1, Math.ceil((use.oldestAt + RATE_LIMIT_WINDOW_MS - now) / 1000));
}

/**
 * OpenAI's rate-limit headers for the limits in force: x-ratelimit-limit-requests, -remaining-requests and
 * -reset-requests (how long until the oldest call counted leaves the window, as "12s"), and the `-tokens` trio.
 */
export function limitHeaders(rule: LimitRule, use: LimitUse, now: number): Record<string, string> {
  const headers: Record<string, string> = {};
  const reset = `${use.oldestAt === undefined ? 0 : retryAfterSeconds(use, now)}s`;
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
