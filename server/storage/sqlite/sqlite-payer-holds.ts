import type Database from "better-sqlite3";
import type { PayerHold, PayerHoldStore } from "../../payment/payer-holds";
import type { SqliteDatabase } from "./open-sqlite";

/**
 * Payers' holds on SQLite: taking one is one IMMEDIATE transaction (SQLite's single writer, across processes too),
 * which drops the payer's expired holds, sums the live ones and inserts the new one only if it fits (one without a
 * capacity: only if there are none).
 */
/** A payer's live holds: how many, their sum, and whether one rests on a sponsored permit. */
type LiveHolds = { count: bigint; amount: bigint | null; sponsored: number | null };

export class SqlitePayerHolds implements PayerHoldStore {
  private readonly take: (hold: PayerHold, now: number) => boolean;
  private readonly drop: Database.Statement<[string]>;
  private readonly live: Database.Statement<[string, number], LiveHolds>;

  constructor(database: SqliteDatabase) {
    const client = database.$client;
    const expired = client.prepare<[string, number]>("delete from payer_holds where payer = ? and expires_at <= ?");
    this.live = client
      .prepare<[string, number], LiveHolds>(
        "select count(*) as count, sum(cast(amount as integer)) as amount, max(sponsored) as sponsored from payer_holds where payer = ? and expires_at > ?",
      )
      .safeIntegers(true);
    const insert = client.prepare<[string, string, string, number, number]>(
      "insert into payer_holds (key, payer, amount, sponsored, expires_at) values (?, ?, ?, ?, ?) on conflict (key) do nothing",
    );
    this.drop = client.prepare<[string]>("delete from payer_holds where key = ?");
    const transaction = client.transaction((hold: PayerHold, now: number): boolean => {
      expired.run(hold.payer, now);
      const { count, amount, sponsored } = this.live.get(hold.payer, now) ?? {
        count: 0n,
        amount: null,
        sponsored: null,
      };
      if (hold.sponsored && Number(sponsored ?? 0) > 0) return false;
      if (hold.capacity === undefined ? count > 0n : (amount ?? 0n) + hold.amount > hold.capacity) return false;
      const result = insert.run(hold.key, hold.payer, hold.amount.toString(), hold.sponsored ? 1 : 0, hold.expiresAt);
      return result.changes === 1;
    });
    this.take = (hold, now) => transaction.immediate(hold, now);
  }

  async hold(hold: PayerHold, now: number): Promise<boolean> {
    return this.take(hold, now);
  }

  async release(key: string): Promise<void> {
    this.drop.run(key);
  }

  async heldBy(payer: string, now: number): Promise<{ amount: bigint; sponsored: boolean }> {
    const row = this.live.get(payer, now);
    return { amount: row?.amount ?? 0n, sponsored: Number(row?.sponsored ?? 0) > 0 };
  }
}
