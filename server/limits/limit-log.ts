/** What a subject may do per minute and at once; 0 leaves that one unlimited. */
export interface LimitRule {
  requestsPerMinute: number;
  /** Tokens per minute: each call counts its reservation (input + output cap), then what it was charged. */
  tokensPerMinute: number;
  concurrent: number;
}

/** What a subject has used, as the store saw it when it admitted (or refused) a call. */
export interface LimitUse {
  /** The requests counted in the last window (what the request clock is ahead of now, in calls). */
  requests: number;
  /** The tokens counted in the last window (what the token clock is ahead of now, in tokens). */
  tokens: number;
  running: number;
  /** How long until one more request has room (0: now), for the reset header. */
  requestsResetMs: number;
  /** How long until the limit that refused a call has room for it (0 when admitted). */
  waitMs: number;
}

/** One call to admit: the tokens it counts, and until when it counts as running unless renewed (ms). */
export interface LimitTake {
  tokens: number;
  leaseUntil: number;
}

/** An admitted call, as its end, renewal or return names it. */
export interface LimitTicket {
  subject: string;
  /** The subject's lease epoch it runs in: a call of a lapsed epoch no longer counts as running. */
  epoch: number;
  /** What it moved the request clock and the token clock on (ms); ms a token counts (0: no token limit). */
  requestMs: number;
  tokensMs: number;
  msPerToken: number;
  tokens: number;
}

/**
 * Each rate-limited subject (`key:<id>`, `wallet:<address>`) is one row, shared by every instance over the database:
 * a generic cell rate algorithm per limit (a request clock and a token clock, each moved on by what a call counts,
 * never more than a window ahead of now) and a count of calls running under a lease the running calls renew. `take`
 * admits a call only if every limit of `rule` has room, as one statement on that row: of concurrent calls of one
 * subject, on any instances, no more than the limits are admitted. A call's process that dies leaves its count until
 * no call of the subject renewed the lease for its length (the count then starts again: a new epoch).
 */
export interface LimitLog {
  /** Admits one call (its ticket) or refuses it (none), with what the subject used. */
  take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken>;
  /** The call ended: it counts `tokens` from now on (its reservation's rest given back), and no longer runs. */
  end(ticket: LimitTicket, tokens: number): Promise<void>;
  /** The call still runs: its subject's lease lasts until `leaseUntil` (ms). */
  renew(ticket: LimitTicket, leaseUntil: number): Promise<void>;
  /** Uncounts a call that was never served. */
  give(ticket: LimitTicket): Promise<void>;
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
  ticket: LimitTicket | undefined;
  use: LimitUse;
}

/** A row of `rate_limits` as its admitting statement returns it (rate-limit-sql.ts). */
export interface LimitRow {
  admitted: number | boolean;
  requests_at: number;
  tokens_at: number;
  running: number;
  epoch: number;
}

/** What one admission asks of the row: each clock's step (0: no such limit), the concurrency, the lease, the hour. */
export function limitStep(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number) {
  const requestMs = rule.requestsPerMinute > 0 ? windowMs / rule.requestsPerMinute : 0;
  const msPerToken = rule.tokensPerMinute > 0 ? windowMs / rule.tokensPerMinute : 0;
  return {
    subject,
    now,
    windowMs,
    requestMs,
    msPerToken,
    // A call counting more tokens than a minute holds is never admitted: it is over the window at once.
    tokensMs: msPerToken * call.tokens,
    concurrent: rule.concurrent,
    leaseUntil: call.leaseUntil,
    hour: Math.floor(now / 3_600_000),
  };
}

/** The store's answer to a take, from the row its statement returned. */
export function limitTaken(step: ReturnType<typeof limitStep>, row: LimitRow, tokens: number): LimitTaken {
  const { now, windowMs, requestMs, msPerToken, tokensMs } = step;
  const ahead = (at: number) => Math.max(0, at - now);
  // What a clock is ahead of now, in the calls or tokens it stands for: a part of one counts as one (a call refused
  // for its requests is told none is left), less a hair of floating point.
  const counted = (at: number, step: number) => (step > 0 ? Math.ceil(ahead(at) / step - 1e-6) : 0);
  const use = {
    requests: counted(row.requests_at, requestMs),
    tokens: counted(row.tokens_at, msPerToken),
    running: row.running,
    requestsResetMs: requestMs > 0 ? Math.max(0, ahead(row.requests_at) - (windowMs - requestMs)) : 0,
    waitMs: 0,
  };
  if (row.admitted === 1 || row.admitted === true) {
    const ticket = { subject: step.subject, epoch: row.epoch, requestMs, tokensMs, msPerToken, tokens };
    return { ticket, use };
  }
  const waits = [
    requestMs > 0 ? Math.max(now, row.requests_at) + requestMs - now - windowMs : 0,
    msPerToken > 0 ? Math.max(now, row.tokens_at) + tokensMs - now - windowMs : 0,
  ];
  return { ticket: undefined, use: { ...use, waitMs: Math.max(0, ...waits) } };
}
