import { isIP } from "node:net";
import type { OperatorStore } from "../storage/operator-store";

/**
 * Sign-in attempts admitted per client address in a window: enough for an operator who mistypes, far too few to
 * guess a token. Every attempt counts, right or wrong, so the count is taken before the token is compared.
 */
export const SIGN_IN_ATTEMPTS = 10;
export const SIGN_IN_WINDOW_SECONDS = 15 * 60;

/**
 * The key an address is counted under: an IPv4 address as it is, an IPv6 address by its /64 (one subscriber's
 * network holds 2^64 addresses, each otherwise a fresh allowance).
 */
export function attemptKey(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = "", tail = ""] = address.toLowerCase().split("::");
  const headGroups = head === "" ? [] : head.split(":");
  const tailGroups = tail === "" ? [] : tail.split(":");
  // An embedded IPv4 tail (64:ff9b::1.2.3.4) stands for two groups, all past the /64.
  const v4Tail = tailGroups.at(-1)?.includes(".") ? 1 : 0;
  const missing = 8 - headGroups.length - tailGroups.length - v4Tail;
  const groups = address.includes("::")
    ? [...headGroups, ...Array<string>(missing).fill("0"), ...tailGroups]
    : headGroups;
  return `${groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(":")}::/64`;
}

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
    const { windowStart, attempts } = await this.store().countSignIn(attemptKey(address), now, this.windowMs);
    if (attempts <= this.limit) return { admitted: true };
    return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart + this.windowMs - now) / 1000)) };
  }
}
