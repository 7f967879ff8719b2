import { ApiError } from "../core/errors";
import { callerGroup } from "./caller-group";
import type { CountedWindow, WindowLog } from "./window-log";

/** A window of a scope: its name in answers (`per10Min`), its length and how many requests it admits. */
export interface WindowRule extends CountedWindow {
  name: string;
}

export interface WindowUsage {
  name: string;
  limit: number;
  used: number;
  /** Seconds until the oldest counted request leaves the window (0 when none is counted). */
  resetSeconds: number;
}

/** A request let in: the RateLimit headers to answer with, and how to uncount it when it was not served. */
export interface Admission {
  headers: Record<string, string>;
  giveBack(): Promise<void>;
}

/** IETF RateLimit headers (draft 7) for the window closest to its limit; none when nothing is limited. */
export function rateLimitHeaders(usage: readonly WindowUsage[], rules: readonly WindowRule[]): Record<string, string> {
  const tightest = [...usage].sort((a, b) => a.limit - a.used - (b.limit - b.used))[0];
  if (!tightest) return {};
  return {
    "RateLimit-Policy": rules.map((rule) => `${rule.limit};w=${Math.round(rule.durationMs / 1000)}`).join(", "),
    "RateLimit-Limit": String(tightest.limit),
    "RateLimit-Remaining": String(Math.max(0, tightest.limit - tightest.used)),
    "RateLimit-Reset": String(tightest.resetSeconds),
  };
}

/**
 * Per-caller windows of one scope (the free chat, the free embeddings, and the rate limits to come), counted in the
 * database so that every instance shares them. A caller is its address, an IPv6 one by its /64 (caller-group.ts).
 * `refusal` words the 429 for a caller told to retry in some seconds. A scope with no rules limits nothing.
 */
export class CallerWindows {
  constructor(
    private readonly log: WindowLog,
    private readonly scope: {
      name: string | undefined;
      rules: readonly WindowRule[];
      refusal: (retryAfter: number) => string;
    },
  ) {}

  get rules(): readonly WindowRule[] {
    return this.scope.rules;
  }

  /**
   * The key of a caller's rows. The free chat's scope has no name: its keys predate scopes, and staying bare keeps
   * its windows across an upgrade.
   */
  private key(address: string): string {
    const group = callerGroup(address);
    return this.scope.name === undefined ? group : `${this.scope.name}:${group}`;
  }

  async usage(address: string, now = Date.now()): Promise<WindowUsage[]> {
    if (this.rules.length === 0) return [];
    const counts = await this.log.count(this.key(address), this.rules, now);
    return this.rules.map((rule, index) => {
      const { used, oldest } = counts[index] ?? { used: 0 };
      const resetSeconds = oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + rule.durationMs - now) / 1000));
      return { name: rule.name, limit: rule.limit, used, resetSeconds };
    });
  }

  /** The RateLimit headers of a caller's use now (to answer a refused request with, too). */
  async headers(address: string): Promise<Record<string, string>> {
    return rateLimitHeaders(await this.usage(address), this.rules);
  }

  /** Counts a request of the caller, or refuses it: 429 `free_tier_exhausted` with Retry-After and RateLimit headers. */
  async admit(address: string, now = Date.now()): Promise<Admission> {
    if (this.rules.length === 0) return { headers: {}, giveBack: async () => {} };
    const key = this.key(address);
    const slot = await this.log.take(key, this.rules, now);
    const usage = await this.usage(address, now);
    const headers = rateLimitHeaders(usage, this.rules);
    if (slot === undefined) {
      const exhausted = usage.filter((window) => window.used >= window.limit);
      const retryAfter = Math.max(...exhausted.map((window) => window.resetSeconds), 1);
      throw new ApiError("free_tier_exhausted", this.scope.refusal(retryAfter), {
        headers: { ...headers, "Retry-After": String(retryAfter) },
        extra: { retry_after: retryAfter },
      });
    }
    return { headers, giveBack: () => this.log.give(slot) };
  }

  /**
   * Runs `work` as one counted request of the caller, uncounted again if it throws (a request that failed upstream
   * costs the caller nothing). `work` gets the RateLimit headers to answer with.
   */
  async serve<T>(address: string, work: (headers: Record<string, string>) => Promise<T>): Promise<T> {
    const admission = await this.admit(address);
    try {
      return await work(admission.headers);
    } catch (error) {
      await admission.giveBack();
      throw error;
    }
  }
}
