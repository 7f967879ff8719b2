import { sql } from "drizzle-orm";
import { freeChat } from "../../config/free-tier";
import type { AppDatabase } from "../storage/database";

export interface WindowUsage {
  name: string;
  limit: number;
  used: number;
  /** Seconds until the oldest counted request leaves the window (0 when none is counted). */
  resetSeconds: number;
}

/** The free chat's per-address windows (10 per 10 minutes, 100 per day), over a sliding log in the database. */
export class FreeChatWindows {
  constructor(private readonly database: AppDatabase) {}

  usage(address: string, now = Date.now()): WindowUsage[] {
    return freeChat.windows.map((window) => {
      const row = this.database.get<{ used: number; oldest: number | null }>(sql`
        select count(*) as used, min(at) as oldest from free_chat_requests
        where address = ${address} and at > ${now - window.durationMs}`);
      const used = row?.used ?? 0;
      const resetSeconds = row?.oldest ? Math.max(1, Math.ceil((row.oldest + window.durationMs - now) / 1000)) : 0;
      return { name: window.name, limit: window.limit, used, resetSeconds };
    });
  }

  /** Counts one request if every window has room: one conditional INSERT. Returns its id, or undefined. */
  take(address: string, now = Date.now()): number | undefined {
    const [short, day] = freeChat.windows;
    const row = this.database.get<{ id: number }>(sql`
      insert into free_chat_requests (address, at)
      select ${address}, ${now}
      where (select count(*) from free_chat_requests where address = ${address} and at > ${now - short.durationMs}) < ${short.limit}
        and (select count(*) from free_chat_requests where address = ${address} and at > ${now - day.durationMs}) < ${day.limit}
      returning id`);
    if (row)
      this.database.run(
        sql`delete from free_chat_requests where address = ${address} and at <= ${now - day.durationMs}`,
      );
    return row?.id;
  }

  /** Uncounts a request that failed upstream. */
  give(id: number): void {
    this.database.run(sql`delete from free_chat_requests where id = ${id}`);
  }
}
