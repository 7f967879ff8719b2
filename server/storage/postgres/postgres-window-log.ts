import type { CountedWindow, WindowLog } from "../../windows/window-log";
import type { PostgresDatabase } from "./open-postgres";

/**
 * The window log on PostgreSQL, in the table the free chat's windows first used (`free_chat_requests`: its `address`
 * column holds the key). A request is counted by paysvc_take_free_chat (migration 0001), which takes a lock per key
 * before it counts, so concurrent requests under one key on any instances are counted one at a time.
 */
export class PostgresWindowLog implements WindowLog {
  constructor(private readonly database: PostgresDatabase) {}

  async count(key: string, windows: readonly CountedWindow[], now: number) {
    return Promise.all(
      windows.map(async (window) => {
        const { rows } = await this.database.$client.query<{ used: number; oldest: number | null }>(
          `select count(*)::float8 as used, (extract(epoch from min(at)) * 1000)::float8 as oldest
            from free_chat_requests where address = $1 and at > $2`,
          [key, new Date(now - window.durationMs)],
        );
        const row = rows[0];
        return { used: row?.used ?? 0, oldest: row?.oldest ?? undefined };
      }),
    );
  }

  async take(key: string, windows: readonly CountedWindow[], now: number): Promise<number | undefined> {
    const { rows } = await this.database.$client.query<{ id: number | null }>({
      name: "paysvc_take_free_chat",
      text: "select paysvc_take_free_chat($1, $2, $3::bigint[], $4::integer[])::float8 as id",
      values: [key, new Date(now), windows.map((window) => window.durationMs), windows.map((window) => window.limit)],
    });
    return rows[0]?.id ?? undefined;
  }

  async give(id: number): Promise<void> {
    await this.database.$client.query("delete from free_chat_requests where id = $1", [id]);
  }
}
