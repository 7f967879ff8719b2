import { sql } from "drizzle-orm";
import type { QuoteHoldStore } from "../../payment/quote-hold";
import type { SqliteDatabase } from "./open-sqlite";

/** Held quotes on SQLite; a live value is never overwritten (the conflict update applies only to an expired one). */
export class SqliteQuoteHolds implements QuoteHoldStore {
  constructor(private readonly database: SqliteDatabase) {}

  async find(key: string, now: number): Promise<string | undefined> {
    const row = this.database.get<{ value: string }>(
      sql`select value from quote_holds where key = ${key} and expires_at > ${now}`,
    );
    return row?.value;
  }

  async hold(key: string, value: string, now: number, expiresAt: number): Promise<string> {
    this.database.run(sql`delete from quote_holds where expires_at <= ${now}`);
    const row = this.database.get<{ value: string }>(sql`
      insert into quote_holds (key, value, expires_at) values (${key}, ${value}, ${expiresAt})
      on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at
        where quote_holds.expires_at <= ${now}
      returning value`);
    return row?.value ?? (await this.find(key, now)) ?? value;
  }
}
