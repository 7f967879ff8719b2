import { sql } from "drizzle-orm";
import type { OperatorStore } from "../operator-store";
import type { SqliteDatabase } from "./open-sqlite";

/**
 * The operator's session generation and sign-in windows on SQLite: each change is one upsert, and SQLite runs one
 * writer at a time, across processes too, so no two instances can both read the same count.
 */
export class SqliteOperatorStore implements OperatorStore {
  constructor(private readonly database: SqliteDatabase) {}

  async generation(): Promise<number> {
    const row = this.database.get<{ generation: number }>(sql`select generation from operator_sessions where id = 1`);
    return row?.generation ?? 0;
  }

  async endSessions(): Promise<number> {
    const row = this.database.get<{ generation: number }>(sql`
      insert into operator_sessions (id, generation) values (1, 1)
      on conflict (id) do update set generation = operator_sessions.generation + 1
      returning generation`);
    return row!.generation;
  }

  async countSignIn(key: string, now: number, windowMs: number) {
    const ended = now - windowMs;
    this.database.run(sql`delete from operator_sign_ins where window_start <= ${ended} and address <> ${key}`);
    // Both CASEs read the row as it was: a window that has ended starts again at this attempt.
    const row = this.database.get<{ windowStart: number; attempts: number }>(sql`
      insert into operator_sign_ins (address, window_start, attempts) values (${key}, ${now}, 1)
      on conflict (address) do update set
        window_start = case when operator_sign_ins.window_start <= ${ended} then excluded.window_start
          else operator_sign_ins.window_start end,
        attempts = case when operator_sign_ins.window_start <= ${ended} then 1 else operator_sign_ins.attempts + 1 end
      returning window_start as windowStart, attempts`);
    return row!;
  }
}
