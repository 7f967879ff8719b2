import type { OperatorStore } from "../operator-store";
import type { PostgresDatabase } from "./open-postgres";

/**
 * The operator's session generation and sign-in windows on PostgreSQL. Each change is one INSERT ... ON CONFLICT
 * DO UPDATE: of two instances counting the same address at once, the second waits on the first's row and updates
 * what it committed, so no attempt is lost even under READ COMMITTED.
 */
export class PostgresOperatorStore implements OperatorStore {
  constructor(private readonly database: PostgresDatabase) {}

  async generation(): Promise<number> {
    const { rows } = await this.database.$client.query<{ generation: number }>(
      "select generation::float8 as generation from operator_sessions where id = 1",
    );
    return rows[0]?.generation ?? 0;
  }

  async endSessions(): Promise<number> {
    const { rows } = await this.database.$client.query<{ generation: number }>(
      `insert into operator_sessions (id, generation) values (1, 1)
        on conflict (id) do update set generation = operator_sessions.generation + 1
        returning generation::float8 as generation`,
    );
    return rows[0]!.generation;
  }

  async countSignIn(key: string, now: number, windowMs: number) {
    const ended = new Date(now - windowMs);
    await this.database.$client.query("delete from operator_sign_ins where window_start <= $1 and address <> $2", [
      ended,
      key,
    ]);
    // Both CASEs read the row as it was: a window that has ended starts again at this attempt.
    const { rows } = await this.database.$client.query<{ windowStart: number; attempts: number }>(
      `insert into operator_sign_ins (address, window_start, attempts) values ($1, $2, 1)
        on conflict (address) do update set
          window_start = case when operator_sign_ins.window_start <= $3 then excluded.window_start
            else operator_sign_ins.window_start end,
          attempts = case when operator_sign_ins.window_start <= $3 then 1 else operator_sign_ins.attempts + 1 end
        returning (extract(epoch from window_start) * 1000)::float8 as "windowStart", attempts`,
      [key, new Date(now), ended],
    );
    return rows[0]!;
  }
}
