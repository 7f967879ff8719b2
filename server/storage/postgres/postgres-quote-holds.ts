import type { QuoteHoldStore } from "../../payment/quote-hold";
import type { PostgresDatabase } from "./open-postgres";

/**
 * Held quotes on PostgreSQL. INSERT ... ON CONFLICT is atomic against a concurrent twin: of two instances holding
 * the same key at once, the second's conflict update finds the first's live row and leaves it.
 */
export class PostgresQuoteHolds implements QuoteHoldStore {
  constructor(private readonly database: PostgresDatabase) {}

  async find(key: string, now: number): Promise<string | undefined> {
    const { rows } = await this.database.$client.query<{ value: string }>(
      "select value from quote_holds where key = $1 and expires_at > $2",
      [key, new Date(now)],
    );
    return rows[0]?.value;
  }

  async hold(key: string, value: string, now: number, expiresAt: number): Promise<string> {
    await this.database.$client.query("delete from quote_holds where expires_at <= $1", [new Date(now)]);
    const { rows } = await this.database.$client.query<{ value: string }>(
      `insert into quote_holds (key, value, expires_at) values ($1, $2, $3)
        on conflict (key) do update set value = excluded.value, expires_at = excluded.expires_at
          where quote_holds.expires_at <= $4
        returning value`,
      [key, value, new Date(expiresAt), new Date(now)],
    );
    return rows[0]?.value ?? (await this.find(key, now)) ?? value;
  }
}
