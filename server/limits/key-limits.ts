import { limitFields, type LimitFields } from "../../config/rate-limits";
import type { LimitRule } from "./limit-log";

/** The limits a key's buyer asked for at purchase, each optional: lower than the deployment's, they apply. */
export const keyLimitsSchema = limitFields(1);

export type KeyLimits = LimitFields;

/** A key's stored limits (a JSON column), or none. */
export function parseKeyLimits(stored: string | null | undefined): KeyLimits | undefined {
  if (!stored) return undefined;
  const parsed = keyLimitsSchema.safeParse(JSON.parse(stored));
  return parsed.success ? parsed.data : undefined;
}

/** The tighter of two limits, where 0 is none. */
const tighter = (limit: number, asked: number | undefined) =>
  asked === undefined ? limit : limit === 0 ? asked : Math.min(limit, asked);

/** The deployment's rule for keys, tightened by what the key's buyer asked for. */
export function keyRule(rule: LimitRule, asked: KeyLimits | undefined): LimitRule {
  if (!asked) return rule;
  return {
    requestsPerMinute: tighter(rule.requestsPerMinute, asked.requests_per_minute),
    tokensPerMinute: tighter(rule.tokensPerMinute, asked.tokens_per_minute),
    concurrent: tighter(rule.concurrent, asked.concurrent),
  };
}

/** A rule as callers read it (status, purchase): each limit, or null where there is none. */
export function describeRule(rule: LimitRule) {
  const orNull = (limit: number) => (limit === 0 ? null : limit);
  return {
    requests_per_minute: orNull(rule.requestsPerMinute),
    tokens_per_minute: orNull(rule.tokensPerMinute),
    concurrent: orNull(rule.concurrent),
  };
}
