import type Database from "better-sqlite3";
import type { LiveHolds, PayerHold, PayerHoldStore } from "../../payment/payer-holds";
import type { SqliteDatabase } from "./open-sqlite";

/** A payer's live holds as one row: how many, their sum, whether one rests on a sponsored permit; its ended ones. */
type LiveRow = {
  count: bigint;
  amount: bigint | null;
  sponsored: number | null;
  ended: bigint | null;
  ended_amount: string | null;
};

/**
 * Payers' holds on SQLite: taking one is one IMMEDIATE transaction (SQLite's single writer, across processes too),
 * which drops the payer's expired holds, sums the live ones and inserts the new one only if it fits (one without a
 * capacity: only if there are none), the payer's holds ended since its capacity was read counted as still live.
 * Ending a hold deletes it and counts it and its amount in payer_hold_ends, in one transaction.
 */
export class SqlitePayerHolds implements PayerHoldStore {
  private readonly take: (hold: PayerHold, now: number) => boolean;
  private readonly end: (key: string) => void;
  private readonly live: Database.Statement<[string, string, string, number], LiveRow>;
  private readonly lowered: Database.Statement<[string, string, string]>;

  constructor(database: SqliteDatabase) {
    const client = database.$client;
    const expired = client.prepare<[string, number]>("delete from payer_holds where payer = ? and expires_at <= ?");
    this.live = client
      .prepare<[string, string, string, number], LiveRow>(
        `select count(*) as count, sum(cast(amount as integer)) as amount, max(sponsored) as sponsored,
           (select ended from payer_hold_ends where payer = ?) as ended,
           (select ended_amount from payer_hold_ends where payer = ?) as ended_amount
         from payer_holds where payer = ? and expires_at > ?`,
      )
      .safeIntegers(true);
    const insert = client.prepare<[string, string, string, number, number]>(
      "insert into payer_holds (key, payer, amount, sponsored, expires_at) values (?, ?, ?, ?, ?) on conflict (key) do nothing",
    );
    this.lowered = client.prepare<[string, string, string]>(
      "update payer_holds set amount = ? where key = ? and cast(amount as integer) > cast(? as integer)",
    );
    const drop = client.prepare<[string], { payer: string; amount: string }>(
      "delete from payer_holds where key = ? returning payer, amount",
    );
    const endedAmount = client.prepare<[string], { ended_amount: string }>(
      "select ended_amount from payer_hold_ends where payer = ?",
    );
    // The sum is added up in bigint here, in the transaction: SQLite's integers would turn to floats past 2^63.
    const count = client.prepare<[string, string, string]>(
      `insert into payer_hold_ends (payer, ended, ended_amount) values (?, 1, ?)
       on conflict (payer) do update set ended = ended + 1, ended_amount = ?`,
    );
    const transaction = client.transaction((hold: PayerHold, now: number): boolean => {
      expired.run(hold.payer, now);
      const live = this.liveHolds(hold.payer, now);
      if (hold.sponsored && live.sponsored) return false;
      const endedSince = hold.endedAmountBefore === undefined ? 0n : live.endedAmount - hold.endedAmountBefore;
      if (hold.capacity === undefined ? live.count > 0n : live.amount + endedSince + hold.amount > hold.capacity) {
        return false;
      }
      const result = insert.run(hold.key, hold.payer, hold.amount.toString(), hold.sponsored ? 1 : 0, hold.expiresAt);
      return result.changes === 1;
    });
    this.take = (hold, now) => transaction.immediate(hold, now);
    const ending = client.transaction((key: string) => {
      const dropped = drop.get(key);
      if (!dropped) return;
      const sum = (BigInt(endedAmount.get(dropped.payer)?.ended_amount ?? 0) + BigInt(dropped.amount)).toString();
      count.run(dropped.payer, sum, sum);
    });
    this.end = (key) => ending.immediate(key);
  }

  async hold(hold: PayerHold, now: number): Promise<boolean> {
    return this.take(hold, now);
  }

  async release(key: string): Promise<void> {
    this.end(key);
  }

  async lower(key: string, amount: bigint): Promise<void> {
    this.lowered.run(amount.toString(), key, amount.toString());
  }

  async heldBy(payer: string, now: number): Promise<LiveHolds> {
    const { amount, sponsored, ended, endedAmount } = this.liveHolds(payer, now);
    return { amount, sponsored, ended, endedAmount };
  }

  private liveHolds(payer: string, now: number): LiveHolds & { count: bigint } {
    const row = this.live.get(payer, payer, payer, now);
    return {
      count: row?.count ?? 0n,
      amount: row?.amount ?? 0n,
      sponsored: Number(row?.sponsored ?? 0) > 0,
      ended: row?.ended ?? 0n,
      endedAmount: BigInt(row?.ended_amount ?? 0),
    };
  }
}
