/** What a subject may do per minute and at once; 0 leaves that one unlimited. */
export interface LimitRule {
  requestsPerMinute: number;
  /** Tokens per minute: each call counts its reservation (input + output cap), then what it was charged. */
  tokensPerMinute: number;
  concurrent: number;
}

/** What a subject did within the window, as the store saw it when it admitted (or refused) a call. */
export interface LimitUse {
  requests: number;
  tokens: number;
  running: number;
  /** When the oldest call counted within the window started (ms), if any. */
  oldestAt?: number;
}

/** One call to admit: the tokens it counts, and until when it counts as running unless renewed (ms). */
export interface LimitTake {
  tokens: number;
  leaseUntil: number;
}

/**
 * The calls of each rate-limited subject (`key:<id>`, `wallet:<address>`), one row per admitted call, shared by every
 * instance over the database. `take` admits a call only if every limit of `rule` still has room, as one atomic step
 * per subject (one transaction on SQLite, one function call holding a lock per subject on PostgreSQL): of concurrent
 * calls of one subject, on any instances, no more than the limits are admitted.
 */
export interface LimitLog {
  /** Admits one call within `windowMs` (its row's id) or refuses it (no id), with what the subject used. */
  take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken>;
  /** The call ended: it counts `tokens` from now on, and no longer runs. */
  end(id: number, tokens: number): Promise<void>;
  /** The call still runs: it counts as running until `leaseUntil` (ms). */
  renew(id: number, leaseUntil: number): Promise<void>;
  /** Uncounts a call that was never served. */
  give(id: number): Promise<void>;
  /**
   * The `count` subjects with the most calls admitted in the clock hour `hour` (hours since the epoch) and the hour
   * before it, the most first, with their refusals.
   */
  busiest(hour: number, count: number): Promise<BusySubject[]>;
}

/** A subject's calls admitted and refused in a clock hour and the one before it. */
export interface BusySubject {
  subject: string;
  calls: number;
  refusals: number;
  previousCalls: number;
  previousRefusals: number;
}

/** A stored row of a subject's hours as the hour `hour` sees it: its own hour's figures, or the previous hour's. */
export function busySubject(
  row: {
    key: string;
    hour: number;
    hour_calls: number;
    hour_refusals: number;
    prev_calls: number;
    prev_refusals: number;
  },
  hour: number,
): BusySubject {
  if (row.hour === hour) {
    const {
      hour_calls: calls,
      hour_refusals: refusals,
      prev_calls: previousCalls,
      prev_refusals: previousRefusals,
    } = row;
    return { subject: row.key, calls, refusals, previousCalls, previousRefusals };
  }
  return {
    subject: row.key,
    calls: 0,
    refusals: 0,
    previousCalls: row.hour_calls,
    previousRefusals: row.hour_refusals,
  };
}

export interface LimitTaken {
  id: number | undefined;
  use: LimitUse;
}
