import { callerGroup } from "../windows/caller-group";
import { retryAfterSeconds } from "./limit-headers";
import type { LimitLog } from "./limit-log";

/**
 * Sign-in attempts admitted per client address in a window: enough for an operator who mistypes, far too few to
 * guess a token. Every attempt counts, right or wrong, so the count is taken before the token is compared. An
 * address is counted as the free windows count it (an IPv6 address by its /64: windows/caller-group.ts).
 */
export const SIGN_IN_ATTEMPTS = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** An attempt's verdict: admitted, or refused until one more attempt has room. */
export type SignInVerdict = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/**
 * The sign-in attempts per address, a kind of the rate limits (limit-log.ts: one row per address in the database,
 * exact across instances): a burst of SIGN_IN_ATTEMPTS, then one each SIGN_IN_WINDOW_SECONDS / SIGN_IN_ATTEMPTS.
 */
export class SignInAttempts {
  private readonly rule = { requestsPerMinute: SIGN_IN_ATTEMPTS, tokensPerMinute: 0, concurrent: 0 };

  constructor(
    private readonly log: () => LimitLog,
    private readonly windowMs = SIGN_IN_WINDOW_SECONDS * 1000,
  ) {}

  async attempt(address: string, now = Date.now()): Promise<SignInVerdict> {
    const subject = `sign-in:${callerGroup(address)}`;
    const { ticket, use } = await this.log().take(
      subject,
      this.rule,
      { tokens: 0, leaseUntil: now },
      this.windowMs,
      now,
    );
    return ticket ? { admitted: true } : { admitted: false, retryAfterSeconds: retryAfterSeconds(use) };
  }
}
