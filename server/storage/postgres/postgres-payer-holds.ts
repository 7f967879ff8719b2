import type { LiveHolds, PayerHold, PayerHoldStore } from "../../payment/payer-holds";
import type { PostgresDatabase } from "./open-postgres";

/**
 * Payers' holds on PostgreSQL. A sum over other rows is not atomic against a concurrent twin under READ COMMITTED,
 * so taking a hold is one transaction that first takes a transaction-scoped advisory lock on the payer: two
 * instances holding for one payer at once take turns, and the second sums what the first inserted. Ending a hold
 * deletes it and counts it and its amount in payer_hold_ends, in one statement; a hold whose capacity was read
 * before that sum moved counts what it moved by as still held.
 */
export class PostgresPayerHolds implements PayerHoldStore {
  constructor(private readonly database: PostgresDatabase) {}

  async hold(hold: PayerHold, now: number): Promise<boolean> {
    const client = await this.database.$client.connect();
    try {
      await client.query("begin");
      try {
        await client.query("select pg_advisory_xact_lock(hashtextextended('payer_holds:' || $1, 0))", [hold.payer]);
        await client.query("delete from payer_holds where payer = $1 and expires_at <= $2", [
          hold.payer,
          new Date(now),
        ]);
        const { rows } = await client.query<{ inserted: boolean }>(
          `insert into payer_holds (key, payer, amount, sponsored, expires_at)
             select $1, $2, $3, $4, $5
             where case when $6::numeric is null
                     then not exists (select 1 from payer_holds where payer = $2)
                     else (select coalesce(sum(amount), 0) from payer_holds where payer = $2) + $3
                       + coalesce((select ended_amount from payer_hold_ends where payer = $2) - $7::numeric, 0)
                       <= $6 end
               and not ($4 and exists (select 1 from payer_holds where payer = $2 and sponsored))
           on conflict (key) do nothing
           returning true as inserted`,
          [
            hold.key,
            hold.payer,
            hold.amount.toString(),
            hold.sponsored,
            new Date(hold.expiresAt),
            hold.capacity?.toString() ?? null,
            hold.endedAmountBefore?.toString() ?? null,
          ],
        );
        await client.query("commit");
        return rows.length === 1;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      }
    } finally {
      client.release();
    }
  }

  async release(key: string): Promise<void> {
    await this.database.$client.query(
      `with ended as (delete from payer_holds where key = $1 returning payer, amount)
       insert into payer_hold_ends (payer, ended, ended_amount) select payer, 1, amount from ended
       on conflict (payer) do update
         set ended = payer_hold_ends.ended + 1, ended_amount = payer_hold_ends.ended_amount + excluded.ended_amount`,
      [key],
    );
  }

  async lower(key: string, amount: bigint): Promise<void> {
    await this.database.$client.query("update payer_holds set amount = $2 where key = $1 and amount > $2", [
      key,
      amount.toString(),
    ]);
  }

  async heldBy(payer: string, now: number): Promise<LiveHolds> {
    type Row = { amount: string | null; sponsored: boolean | null; ended: string | null; ended_amount: string | null };
    const { rows } = await this.database.$client.query<Row>(
      `select sum(amount) as amount, bool_or(sponsored) as sponsored,
         (select ended::text from payer_hold_ends where payer = $1) as ended,
         (select ended_amount::text from payer_hold_ends where payer = $1) as ended_amount
       from payer_holds where payer = $1 and expires_at > $2`,
      [payer, new Date(now)],
    );
    const row = rows[0];
    return {
      amount: BigInt(row?.amount ?? 0),
      sponsored: row?.sponsored === true,
      ended: BigInt(row?.ended ?? 0),
      endedAmount: BigInt(row?.ended_amount ?? 0),
    };
  }
}
