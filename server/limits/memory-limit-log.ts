import {
  busySubject,
  limitStep,
  limitTaken,
  type BusySubject,
  type LimitLog,
  type LimitRow,
  type LimitRule,
  type LimitTake,
  type LimitTaken,
  type LimitTicket,
} from "./limit-log";

/** A subject's row, as `rate_limits` keeps it (storage/rate-limit-sql.ts). */
interface Row {
  requestsAt: number;
  tokensAt: number;
  running: number;
  leaseUntil: number;
  epoch: number;
  hour: number;
  hourCalls: number;
  hourRefusals: number;
  prevCalls: number;
  prevRefusals: number;
}

/**
 * The rate limits' rows in this process's memory, for the limits that are bounded per instance (the unpaid quotes:
 * counting them in the database would turn a flood of them into a flood of writes). The same cell rate algorithm,
 * lease and epoch as the database's statements (storage/rate-limit-sql.ts), run on a Map; `takeNow` admits at once,
 * for callers that cannot wait a turn. At most `subjectsKept` subjects: beyond, those whose clocks have caught up
 * with now (they would be admitted as new) are dropped, and all of them if that frees less than a tenth, so that a
 * sweep of the whole map comes at most once every tenth of it however the subjects are spread.
 */
export class MemoryLimitLog implements LimitLog {
  private readonly rows = new Map<string, Row>();

  constructor(private readonly subjectsKept = 100_000) {}

  takeNow(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): LimitTaken {
    const step = limitStep(subject, rule, call, windowMs, now);
    const row = this.rows.get(subject) ?? this.newRow(subject, now);
    const live = row.leaseUntil > now;
    const running = live ? row.running : 0;
    if (!live) row.epoch += 1;
    const requestsAt = Math.max(row.requestsAt, now);
    const tokensAt = Math.max(row.tokensAt, now);
    // A microsecond of slack, as the statement's: 60000 / 7 ms steps add up to a hair over a minute.
    const within = windowMs + 0.001;
    const room =
      (step.requestMs === 0 || requestsAt + step.requestMs - now <= within) &&
      (step.msPerToken === 0 || tokensAt + step.tokensMs - now <= within) &&
      (step.concurrent === 0 || running + 1 <= step.concurrent);
    if (row.hour !== step.hour) {
      const lastHour = row.hour === step.hour - 1;
      row.prevCalls = lastHour ? row.hourCalls : 0;
      row.prevRefusals = lastHour ? row.hourRefusals : 0;
      row.hourCalls = 0;
      row.hourRefusals = 0;
      row.hour = step.hour;
    }
    row.running = running;
    if (room) {
      row.requestsAt = requestsAt + step.requestMs;
      row.tokensAt = tokensAt + step.tokensMs;
      row.running += 1;
      row.leaseUntil = Math.max(row.leaseUntil, call.leaseUntil);
      row.hourCalls += 1;
    } else {
      row.hourRefusals += 1;
    }
    const answer: LimitRow = {
      admitted: room,
      requests_at: row.requestsAt,
      tokens_at: row.tokensAt,
      running: row.running,
      epoch: row.epoch,
    };
    return limitTaken(step, answer, call.tokens);
  }

  async take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken> {
    return this.takeNow(subject, rule, call, windowMs, now);
  }

  async end(ticket: LimitTicket, tokens: number): Promise<void> {
    this.finish(ticket, ticket.msPerToken * Math.max(0, ticket.tokens - tokens), 0);
  }

  async renew(ticket: LimitTicket, leaseUntil: number): Promise<void> {
    const row = this.rows.get(ticket.subject);
    if (row && row.epoch === ticket.epoch) row.leaseUntil = Math.max(row.leaseUntil, leaseUntil);
  }

  async give(ticket: LimitTicket): Promise<void> {
    this.finish(ticket, ticket.tokensMs, ticket.requestMs);
  }

  async busiest(hour: number, count: number): Promise<BusySubject[]> {
    const rows = [...this.rows].filter(([, row]) => row.hour >= hour - 1);
    const calls = ([, row]: [string, Row]) => (row.hour === hour ? row.hourCalls + row.prevCalls : row.hourCalls);
    return rows
      .sort((a, b) => calls(b) - calls(a))
      .slice(0, count)
      .map(([key, row]) => {
        const { hourCalls, hourRefusals, prevCalls, prevRefusals } = row;
        const stored = { hour_calls: hourCalls, hour_refusals: hourRefusals, prev_calls: prevCalls };
        return busySubject({ key, hour: row.hour, ...stored, prev_refusals: prevRefusals }, hour);
      });
  }

  private finish(ticket: LimitTicket, giveBackMs: number, requestGiveBackMs: number): void {
    const row = this.rows.get(ticket.subject);
    if (!row) return;
    row.tokensAt -= giveBackMs;
    row.requestsAt -= requestGiveBackMs;
    if (row.epoch === ticket.epoch && row.running > 0) row.running -= 1;
  }

  private newRow(subject: string, now: number): Row {
    if (this.rows.size >= this.subjectsKept) this.forgetCaughtUp(now);
    const row = { requestsAt: now, tokensAt: now, running: 0, leaseUntil: 0, epoch: 0, hour: 0 };
    const counted = { ...row, hourCalls: 0, hourRefusals: 0, prevCalls: 0, prevRefusals: 0 };
    this.rows.set(subject, counted);
    return counted;
  }

  /** Drops the subjects a new row would stand for as well: clocks behind now, nothing running. */
  private forgetCaughtUp(now: number): void {
    for (const [subject, row] of this.rows) {
      if (row.requestsAt <= now && row.tokensAt <= now && row.leaseUntil <= now) this.rows.delete(subject);
    }
    if (this.rows.size > this.subjectsKept * 0.9) this.rows.clear();
  }
}
