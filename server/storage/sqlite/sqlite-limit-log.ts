import type Database from "better-sqlite3";
import {
  busySubject,
  type BusySubject,
  type LimitLog,
  type LimitRule,
  type LimitTake,
  type LimitTaken,
} from "../../limits/limit-log";
import { groupCommitOf, type GroupCommit } from "./group-commit";
import type { SqliteDatabase } from "./open-sqlite";

type Counts = { requests: number; tokens: number };

/**
 * The rate limits' calls on SQLite: admitting, ending or giving back a call is one write of the process's group
 * commit (one IMMEDIATE transaction per turn of the event loop: SQLite's single writer, across processes too).
 * Admitting takes the calls that left the window out of the subject's counts, reads them (one row) and the calls
 * running, and inserts the call only if every limit has room.
 */
export class SqliteLimitLog implements LimitLog {
  private readonly group: GroupCommit;
  private readonly admit: (
    subject: string,
    rule: LimitRule,
    call: LimitTake,
    windowMs: number,
    now: number,
  ) => LimitTaken;
  private readonly finish: (id: number, tokens: number, give: boolean) => void;
  private readonly renewed: (id: number, leaseUntil: number) => void;
  private readonly busy: Database.Statement<{ hour: number; count: number }, Parameters<typeof busySubject>[0]>;

  constructor(database: SqliteDatabase) {
    const client = database.$client;
    this.group = groupCommitOf(client);
    const leaving = client.prepare<[string, number], { tokens: number }>(
      "update rate_limit_calls set counted = 0 where key = ? and at <= ? and counted = 1 returning tokens",
    );
    const gone = client.prepare<[string, number, number]>(
      "delete from rate_limit_calls where key = ? and at <= ? and counted = 0 and (lease_until is null or lease_until <= ?)",
    );
    const counts = client.prepare<{ key: string; left: number; leftTokens: number; hour: number }, Counts>(
      `insert into rate_limit_counts (key, requests, tokens, hour) values (:key, 0, 0, :hour)
       on conflict (key) do update set requests = requests - :left, tokens = tokens - :leftTokens,
         prev_calls = case when hour = :hour then prev_calls when hour = :hour - 1 then hour_calls else 0 end,
         prev_refusals = case when hour = :hour then prev_refusals when hour = :hour - 1 then hour_refusals else 0 end,
         hour_calls = case when hour = :hour then hour_calls else 0 end,
         hour_refusals = case when hour = :hour then hour_refusals else 0 end,
         hour = :hour
       returning requests, tokens`,
    );
    const refused = client.prepare<[string]>(
      "update rate_limit_counts set hour_refusals = hour_refusals + 1 where key = ?",
    );
    const served = client.prepare<[number, string]>(
      "update rate_limit_counts set requests = requests + 1, tokens = tokens + ?, hour_calls = hour_calls + 1 where key = ?",
    );
    const running = client.prepare<[string, number], { running: number }>(
      "select count(*) as running from rate_limit_calls where key = ? and lease_until > ?",
    );
    const oldest = client.prepare<[string, number], { at: number }>(
      "select at from rate_limit_calls where key = ? and at > ? order by at limit 1",
    );
    const insert = client.prepare<[string, number, number, number]>(
      "insert into rate_limit_calls (key, at, tokens, lease_until) values (?, ?, ?, ?)",
    );
    const count = client.prepare<[number, number, string]>(
      "update rate_limit_counts set requests = requests + ?, tokens = tokens + ? where key = ?",
    );
    this.admit = (subject, rule, call, windowMs, now) => {
      const since = now - windowMs;
      const left = leaving.all(subject, since);
      gone.run(subject, since, now);
      const leftTokens = left.reduce((sum, row) => sum + row.tokens, 0);
      const hour = Math.floor(now / 3_600_000);
      const stored = counts.get({ key: subject, left: left.length, leftTokens, hour })!;
      const use = {
        requests: stored.requests,
        tokens: stored.tokens,
        running: running.get(subject, now)!.running,
        oldestAt: oldest.get(subject, since)?.at,
      };
      const over =
        (rule.requestsPerMinute > 0 && use.requests + 1 > rule.requestsPerMinute) ||
        (rule.tokensPerMinute > 0 && use.tokens + call.tokens > rule.tokensPerMinute) ||
        (rule.concurrent > 0 && use.running + 1 > rule.concurrent);
      if (over) {
        refused.run(subject);
        return { id: undefined, use };
      }
      const { lastInsertRowid } = insert.run(subject, now, call.tokens, call.leaseUntil);
      served.run(call.tokens, subject);
      const admitted = { requests: use.requests + 1, tokens: use.tokens + call.tokens, running: use.running + 1 };
      return { id: Number(lastInsertRowid), use: { ...admitted, oldestAt: use.oldestAt ?? now } };
    };
    const find = client.prepare<[number], { key: string; tokens: number; counted: number }>(
      "select key, tokens, counted from rate_limit_calls where id = ?",
    );
    const drop = client.prepare<[number]>("delete from rate_limit_calls where id = ?");
    const ended = client.prepare<[number, number]>(
      "update rate_limit_calls set tokens = ?, lease_until = null where id = ?",
    );
    this.finish = (id, tokens, give) => {
      const call = find.get(id);
      if (!call) return;
      if (give || call.counted === 0) drop.run(id);
      else ended.run(tokens, id);
      if (call.counted === 1) count.run(give ? -1 : 0, (give ? 0 : tokens) - call.tokens, call.key);
    };
    const renew = client.prepare<[number, number]>(
      "update rate_limit_calls set lease_until = ? where id = ? and lease_until is not null",
    );
    this.renewed = (id, leaseUntil) => void renew.run(leaseUntil, id);
    this.busy =
      client.prepare(`select key, hour, hour_calls, hour_refusals, prev_calls, prev_refusals from rate_limit_counts
         where hour >= :hour - 1
         order by case when hour = :hour then hour_calls + prev_calls else hour_calls end desc
         limit :count`);
  }

  take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken> {
    return this.group.run(() => this.admit(subject, rule, call, windowMs, now));
  }

  end(id: number, tokens: number): Promise<void> {
    return this.group.run(() => this.finish(id, tokens, false));
  }

  renew(id: number, leaseUntil: number): Promise<void> {
    return this.group.run(() => this.renewed(id, leaseUntil));
  }

  give(id: number): Promise<void> {
    return this.group.run(() => this.finish(id, 0, true));
  }

  async busiest(hour: number, count: number): Promise<BusySubject[]> {
    return this.busy.all({ hour, count }).map((row) => busySubject(row, hour));
  }
}
