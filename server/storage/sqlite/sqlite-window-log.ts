import { sql, type SQL } from "drizzle-orm";
import type { CountedWindow, WindowLog } from "../../windows/window-log";
import type { SqliteDatabase } from "./open-sqlite";

/**
 * The window log on SQLite, in the table the free chat's windows first used (`free_chat_requests`: its `address`
 * column holds the key). A request is counted by one conditional INSERT that counts the windows itself; SQLite runs
 * one writer at a time, across processes too, so no two requests can both see the last free slot.
 */
export class SqliteWindowLog implements WindowLog {
  constructor(private readonly database: SqliteDatabase) {}

  async count(key: string, windows: readonly CountedWindow[], now: number) {
    return windows.map((window) => {
      const row = this.database.get<{ used: number; oldest: number | null }>(sql`
        select count(*) as used, min(at) as oldest from free_chat_requests
        where address = ${key} and at > ${now - window.durationMs}`);
      return { used: row?.used ?? 0, oldest: row?.oldest ?? undefined };
    });
  }

  async take(key: string, windows: readonly CountedWindow[], now: number): Promise<number | undefined> {
    const roomIn = (window: CountedWindow): SQL =>
      sql`(select count(*) from free_chat_requests where address = ${key} and at > ${now - window.durationMs}) < ${window.limit}`;
    const row = this.database.get<{ id: number }>(sql`
      insert into free_chat_requests (address, at)
      select ${key}, ${now}
      where ${sql.join(windows.map(roomIn), sql` and `)}
      returning id`);
    if (row) {
      const longest = Math.max(...windows.map((window) => window.durationMs));
      this.database.run(sql`delete from free_chat_requests where address = ${key} and at <= ${now - longest}`);
    }
    return row?.id;
  }

  async give(id: number): Promise<void> {
    this.database.run(sql`delete from free_chat_requests where id = ${id}`);
  }
}
