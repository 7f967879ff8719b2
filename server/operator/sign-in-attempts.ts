import { callerGroup } from "../windows/caller-group";
import type { OperatorStore } from "../storage/operator-store";

/**
 * Sign-in attempts admitted per client address in a window: enough for an operator who mistypes, far too few to
 * guess a token. Every attempt counts, right or wrong, so the count is taken before the token is compared. An
 * address is counted as the free windows count it (an IPv6 address by its /64: windows/caller-group.ts).
 */
export const SIGN_IN_ATTEMPTS = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/** An attempt's verdict: admitted, or refused until the window ends. */
export type SignInVerdict = { admitted: true } | { admitted: false; retryAfterSeconds: number };

/** The per-address window of sign-in attempts, counted in the database: exact across instances. */
export class SignInAttempts {
  constructor(
    private readonly store: () => OperatorStore,
    private readonly limit = SIGN_IN_ATTEMPTS,
    private readonly windowMs = SIGN_IN_WINDOW_SECONDS * 1000,
  ) {}

  async attempt(address: string, now = Date.now()): Promise<SignInVerdict> {
    const { windowStart, attempts } = await this.store().countSignIn(callerGroup(address), now, this.windowMs);
    if (attempts <= this.limit) return { admitted: true };
    return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)) };
  }
}
