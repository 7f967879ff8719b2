import {
  busySubject,
  type BusySubject,
  type LimitLog,
  type LimitRule,
  type LimitTake,
  type LimitTaken,
} from "../../limits/limit-log";
import type { PostgresDatabase } from "./open-postgres";

type Row = {
  taken_id: string | null;
  used_requests: string;
  used_tokens: string;
  running: string;
  oldest: Date | null;
};

/**
 * The rate limits' calls on PostgreSQL: a call is admitted by paysvc_take_rate_limit and ended or given back by
 * paysvc_end_rate_limit (migration 0014), each of which takes a lock per subject before it counts, so concurrent
 * calls of one subject on any instances are admitted one at a time and the subject's counts stay exact.
 */
export class PostgresLimitLog implements LimitLog {
  constructor(private readonly database: PostgresDatabase) {}

  async take(subject: string, rule: LimitRule, call: LimitTake, windowMs: number, now: number): Promise<LimitTaken> {
    const { rows } = await this.database.$client.query<Row>({
      name: "paysvc_take_rate_limit",
      text: "select * from paysvc_take_rate_limit($1, $2, $3, $4, $5, $6, $7, $8)",
      values: [
        subject,
        new Date(now),
        windowMs,
        rule.requestsPerMinute,
        rule.tokensPerMinute,
        rule.concurrent,
        call.tokens,
        new Date(call.leaseUntil),
      ],
    });
    const row = rows[0];
    if (!row) throw new Error("paysvc_take_rate_limit returned no row");
    return {
      id: row.taken_id === null ? undefined : Number(row.taken_id),
      use: {
        requests: Number(row.used_requests),
        tokens: Number(row.used_tokens),
        running: Number(row.running),
        oldestAt: row.oldest?.getTime(),
      },
    };
  }

  async end(id: number, tokens: number): Promise<void> {
    await this.database.$client.query("select paysvc_end_rate_limit($1, $2, false)", [id, tokens]);
  }

  async renew(id: number, leaseUntil: number): Promise<void> {
    await this.database.$client.query(
      "update rate_limit_calls set lease_until = $1 where id = $2 and lease_until is not null",
      [new Date(leaseUntil), id],
    );
  }

  async give(id: number): Promise<void> {
    await this.database.$client.query("select paysvc_end_rate_limit($1, 0, true)", [id]);
  }

  async busiest(hour: number, count: number): Promise<BusySubject[]> {
    const { rows } = await this.database.$client.query<Parameters<typeof busySubject>[0]>(
      `select key, hour::float8 as hour, hour_calls::float8 as hour_calls, hour_refusals::float8 as hour_refusals,
         prev_calls::float8 as prev_calls, prev_refusals::float8 as prev_refusals from rate_limit_counts
       where hour >= $1 - 1
       order by case when hour = $1 then hour_calls + prev_calls else hour_calls end desc
       limit $2`,
      [hour, count],
    );
    return rows.map((row) => busySubject(row, hour));
  }
}
