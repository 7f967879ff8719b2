import { RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import { ApiError } from "../core/errors";
import { limitHeaders, retryAfterSeconds } from "./limit-headers";
import type { LimitRule } from "./limit-log";
import { MemoryLimitLog } from "./memory-limit-log";

/** How many callers a process keeps counts of; beyond, those whose quotes have all left the window are dropped. */
const CALLERS_KEPT = 100_000;

/**
 * Unpaid quotes (a paid endpoint asked without a payment or a key: its 402) per caller, an IPv6 caller by its /64.
 * A quote is the work anyone can ask of an instance for nothing (reading, counting and pricing the body), so it is
 * bounded per instance, where the CPU it takes is, in memory: counting it in the database would turn a flood of
 * quotes into a flood of writes. The limit is the rate limits' kind for an address (memory-limit-log.ts: the cell
 * rate of keys and wallets): a burst of the limit, then one each minute / limit.
 */
export class QuoteLimiter {
  private readonly log = new MemoryLimitLog(CALLERS_KEPT);
  private readonly rule: LimitRule;

  /** Whether quotes are counted at all (a limit is set): the caller need not be found otherwise. */
  readonly counts: boolean;

  constructor(
    /** Quotes per minute per caller; 0: none counted. */
    private readonly perMinute: number,
    private readonly refused: () => void = () => {},
  ) {
    this.counts = perMinute > 0;
    this.rule = { requestsPerMinute: perMinute, tokensPerMinute: 0, concurrent: 0 };
  }

  /** Counts a quote of `caller`; throws the 429 (with Retry-After and the x-ratelimit headers) when it is over. */
  admit(caller: string, now = Date.now()): void {
    if (!this.counts) return;
    const call = { tokens: 0, leaseUntil: now };
    const { ticket, use } = this.log.takeNow(`address:${caller}`, this.rule, call, RATE_LIMIT_WINDOW_MS, now);
    if (ticket) return;
    this.refused();
    const retryAfter = retryAfterSeconds(use);
    throw new ApiError(
      "rate_limit_exceeded",
      `Rate limit reached: this address may ask for ${this.perMinute} price quotes (unpaid requests) per minute; retry in ${retryAfter} s, or send the payment with the request. Nothing was charged.`,
      { headers: { ...limitHeaders(this.rule, use), "Retry-After": String(retryAfter) } },
    );
  }
}
