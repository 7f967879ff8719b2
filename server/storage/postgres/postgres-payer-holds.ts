import type { PayerHold, PayerHoldStore } from "../../payment/payer-holds";
import type { PostgresDatabase } from "./open-postgres";

/**
 * Payers' holds on PostgreSQL. A sum over other rows is not atomic against a concurrent twin under READ COMMITTED,
 * so taking a hold is one transaction that first takes a transaction-scoped advisory lock on the payer: two
 * instances holding for one payer at once take turns, and the second sums what the first inserted.
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
                     else (select coalesce(sum(amount), 0) from payer_holds where payer = $2) + $3 <= $6 end
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
    await this.database.$client.query("delete from payer_holds where key = $1", [key]);
  }

  async heldBy(payer: string, now: number): Promise<{ amount: bigint; sponsored: boolean }> {
    const { rows } = await this.database.$client.query<{ amount: string | null; sponsored: boolean | null }>(
      "select sum(amount) as amount, bool_or(sponsored) as sponsored from payer_holds where payer = $1 and expires_at > $2",
      [payer, new Date(now)],
    );
    return { amount: BigInt(rows[0]?.amount ?? 0), sponsored: rows[0]?.sponsored === true };
  }
}
