import type { SessionGenerations } from "../../auth/session-store";
import type { PostgresDatabase } from "./open-postgres";

/**
 * The sessions' generations on PostgreSQL. A sign-out is one INSERT ... ON CONFLICT DO UPDATE: of two at once, the
 * second waits on the first's row and moves on what it committed, so none is lost under READ COMMITTED.
 */
export class PostgresSessionGenerations implements SessionGenerations {
  constructor(private readonly database: PostgresDatabase) {}

  async generation(subject: string): Promise<number> {
    const { rows } = await this.database.$client.query<{ generation: number }>(
      "select generation::float8 as generation from session_generations where subject = $1",
      [subject],
    );
    return rows[0]?.generation ?? 0;
  }

  async endSessions(subject: string): Promise<number> {
    const { rows } = await this.database.$client.query<{ generation: number }>(
      `insert into session_generations (subject, generation) values ($1, 1)
        on conflict (subject) do update set generation = session_generations.generation + 1
        returning generation::float8 as generation`,
      [subject],
    );
    return rows[0]!.generation;
  }
}
