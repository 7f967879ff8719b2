import type Database from "better-sqlite3";
import type { LimitLog, LimitRule, LimitTake, LimitTaken } from "../../limits/limit-log";
import type { SqliteDatabase } from "./open-sqlite";

type Counted = { requests: number; tokens: number | null; running: number; oldest: number | null };

/**
 * The rate limits' calls on SQLite: admitting one is one IMMEDIATE transaction (SQLite's single writer, across
 * processes too), which drops the subject's rows that count no more, counts the rest and inserts the call only if
 * every limit has room.
 */
export class SqliteLimitLog implements LimitLog {
  private readonly admit: (
    subject: string,
    rule: LimitRule,
    call: LimitTake,
    windowMs: number,
    now: number,
  ) => LimitTaken;
  private readonly ended: Database.Statement<[number, number]>;
  private readonly renewed: Database.Statement<[number, number]>;
  private readonly given: Database.Statement<[number]>;

  constructor(database: SqliteDatabase) {
    const client = database.$client;
    const stale = client.prepare<[string, number, number]>(
      "delete from rate_limit_uses where key = ? and at <= ? and (lease_until is null or lease_until <= ?)",
    );
    const counted = client.prepare<[number, number, number, number, string], Counted>(
      `select count(*) filter (where at > ?) as requests, sum(tokens) filter (where at > ?) as tokens,
         count(*) filter (where lease_until > ?) as running, min(at) filter (where at > ?) as oldest
       from rate_limit_uses where key = ?`,
    );
    const insert = client.prepare<[string, number, number, number]>(
      "insert into rate_limit_uses (key, at, tokens, lease_until) values (?, ?, ?, ?)",
    );
    this.ended = client.prepare("update rate_limit_uses set tokens = ?, lease_until = null where id = ?");
    this.renewed = client.prepare(
      "update rate_limit_uses set lease_until = ? where id = ? and lease_until is not null",
    );
    this.given = client.prepare("delete from rate_limit_uses where id = ?");
    const transaction = client.transaction(
      (subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): LimitTaken => {
        const since = now - windowMs;
        stale.run(subject, since, now);
        const row = counted.get(since, since, now, since, subject);
        const use = {
          requests: row?.requests ?? 0,
          tokens: row?.tokens ?? 0,
          running: row?.running ?? 0,
          oldestAt: row?.oldest ?? undefined,
        };
        const over =
          (rule.requestsPerMinute > 0 && use.requests + 1 > rule.requestsPerMinute) ||
          (rule.tokensPerMinute > 0 && use.tokens + call.tokens > rule.tokensPerMinute) ||
          (rule.concurrent > 0 && use.running + 1 > rule.concurrent);
        if (over) return { id: undefined, use };
        const { lastInsertRowid } = insert.run(subject, now, call.tokens, call.leaseUntil);
        const admitted = { requests: use.requests + 1, tokens: use.tokens + call.tokens, running: use.running + 1 };
        return { id: Number(lastInsertRowid), use: { ...admitted, oldestAt: use.oldestAt ?? now } };
      },
    );
    this.admit = (...args) => transaction.immediate(...args);
  }

  async take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number) {
    return this.admit(subject, rule, call, windowMs, now);
  }

  async end(id: number, tokens: number): Promise<void> {
    this.ended.run(tokens, id);
  }

  async renew(id: number, leaseUntil: number): Promise<void> {
    this.renewed.run(leaseUntil, id);
  }

  async give(id: number): Promise<void> {
    this.given.run(id);
  }
}
