import { sql } from "drizzle-orm";
import type { SessionGenerations } from "../../auth/session-store";
import type { SqliteDatabase } from "./open-sqlite";

/**
 * The sessions' generations on SQLite: a sign-out is one upsert, and SQLite runs one writer at a time, across
 * processes too, so two sign-outs at once both move the generation on.
 */
export class SqliteSessionGenerations implements SessionGenerations {
  constructor(private readonly database: SqliteDatabase) {}

  async generation(subject: string): Promise<number> {
    const row = this.database.get<{ generation: number }>(
      sql`select generation from session_generations where subject = ${subject}`,
    );
    return row?.generation ?? 0;
  }

  async endSessions(subject: string): Promise<number> {
    const row = this.database.get<{ generation: number }>(sql`
      insert into session_generations (subject, generation) values (${subject}, 1)
      on conflict (subject) do update set generation = session_generations.generation + 1
      returning generation`);
    return row!.generation;
  }
}
