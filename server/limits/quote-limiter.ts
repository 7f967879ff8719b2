import { RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import { ApiError } from "../core/errors";

/** How many callers a process keeps counts of; beyond, the counts of callers quiet for a window are dropped. */
const CALLERS_KEPT = 100_000;

/** One caller's quotes: in the current fixed minute and the one before (a sliding-window counter). */
interface QuoteCount {
  windowStart: number;
  current: number;
  previous: number;
}

/**
 * Unpaid quotes (a paid endpoint asked without a payment or a key: its 402) per caller, an IPv6 caller by its /64.
 * A quote is the work anyone can ask of an instance for nothing (reading, counting and pricing the body), so it is
 * bounded per instance, where the CPU it takes is, in memory: counting it in the database would turn a flood of
 * quotes into a flood of writes. The window slides as a weighted pair of fixed minutes (the previous minute's count
 * weighted by how much of it is still inside the last 60 s), within one call of an exact sliding window.
 */
export class QuoteLimiter {
  private readonly byCaller = new Map<string, QuoteCount>();

  /** Whether quotes are counted at all (a limit is set): the caller need not be found otherwise. */
  readonly counts: boolean;

  constructor(
    /** Quotes per minute per caller; 0: none counted. */
    private readonly perMinute: number,
    private readonly refused: () => void = () => {},
  ) {
    this.counts = perMinute > 0;
  }

  /** Counts a quote of `caller`; throws the 429 (with Retry-After and the x-ratelimit headers) when it is over. */
  admit(caller: string, now = Date.now()): void {
    if (this.perMinute === 0) return;
    const windowStart = now - (now % RATE_LIMIT_WINDOW_MS);
    let count = this.byCaller.get(caller);
    if (!count) {
      if (this.byCaller.size >= CALLERS_KEPT) this.forgetQuiet(windowStart);
      count = { windowStart, current: 0, previous: 0 };
      this.byCaller.set(caller, count);
    }
    if (count.windowStart !== windowStart) {
      count.previous = windowStart - count.windowStart === RATE_LIMIT_WINDOW_MS ? count.current : 0;
      count.current = 0;
      count.windowStart = windowStart;
    }
    const previousWeight = 1 - (now - windowStart) / RATE_LIMIT_WINDOW_MS;
    const counted = Math.floor(count.previous * previousWeight) + count.current;
    if (counted < this.perMinute) {
      count.current += 1;
      return;
    }
    this.refused();
    throw this.refusal(count, now - windowStart);
  }

  /** The 429: the limit, and when a quote will fit again (the previous minute's weight falling, or the next). */
  private refusal(count: QuoteCount, intoWindow: number): ApiError {
    // Over within this minute alone: a quote fits once the minute turns. Else once the previous minute's weight has
    // fallen below the room this minute leaves.
    const room = this.perMinute - count.current;
    const waitMs =
      room <= 0 ? RATE_LIMIT_WINDOW_MS - intoWindow : RATE_LIMIT_WINDOW_MS * (1 - room / count.previous) - intoWindow;
    const retryAfter = Math.max(1, Math.ceil(Math.min(waitMs, RATE_LIMIT_WINDOW_MS) / 1000));
    return new ApiError(
      "rate_limit_exceeded",
      `Rate limit reached: this address may ask for ${this.perMinute} price quotes (unpaid requests) per minute; retry in ${retryAfter} s, or send the payment with the request. Nothing was charged.`,
      {
        headers: {
          "Retry-After": String(retryAfter),
          "x-ratelimit-limit-requests": String(this.perMinute),
          "x-ratelimit-remaining-requests": "0",
          "x-ratelimit-reset-requests": `${retryAfter}s`,
        },
      },
    );
  }

  /** Drops the callers with nothing in the last two minutes; all of them, if that is not enough. */
  private forgetQuiet(windowStart: number): void {
    for (const [caller, count] of this.byCaller) {
      if (windowStart - count.windowStart > RATE_LIMIT_WINDOW_MS) this.byCaller.delete(caller);
    }
    if (this.byCaller.size >= CALLERS_KEPT) this.byCaller.clear();
  }
}
