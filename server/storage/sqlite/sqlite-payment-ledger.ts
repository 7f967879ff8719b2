import { and, asc, desc, eq, gt, gte, inArray, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import {
  type NewPayment,
  type PaymentLedger,
  type PaymentRecord,
  type PaymentUpdate,
  type ReportPeriod,
  type UnpaidPayer,
  type LedgerReportRow,
} from "../../payment/payment-ledger";
import { claimColumns, claimValues, paymentRecord, updateValues } from "../payment-ledger-rows";
import type { PaymentStatus } from "../../core/payment-status";
import type { SqliteDatabase } from "./open-sqlite";
import { payments } from "./schema";

/**
 * The payments ledger on SQLite. Each method is one statement, compiled once. Placeholders inside sql`` are bound
 * as given: times in ms, as the timestamp_ms columns hold them.
 */
export class SqlitePaymentLedger implements PaymentLedger {
  private readonly insertPending;
  private readonly updateRow;
  private readonly updateRowIf;
  private readonly unpaidRow;

  constructor(private readonly database: SqliteDatabase) {
    const at = sql`${sql.placeholder("at")}`;
    this.insertPending = database
      .insert(payments)
      .values(claimColumns(at))
      .onConflictDoNothing({ target: payments.nonce })
      .returning({ id: payments.id })
      .prepare();
    // A field left out of an update keeps its value.
    const keep = (column: SQLiteColumn, name: string) => sql`coalesce(${sql.placeholder(name)}, ${column})`;
    const set = {
      status: sql`${sql.placeholder("status")}`,
      failureReason: keep(payments.failureReason, "failureReason"),
      transaction: keep(payments.transaction, "transaction"),
      facilitator: keep(payments.facilitator, "facilitator"),
      settledAmount: keep(payments.settledAmount, "settledAmount"),
      unpaidAmount: keep(payments.unpaidAmount, "unpaidAmount"),
      verifyMs: keep(payments.verifyMs, "verifyMs"),
      upstreamMs: keep(payments.upstreamMs, "upstreamMs"),
      settleMs: keep(payments.settleMs, "settleMs"),
      updatedAt: at,
    };
    const id = eq(payments.id, sql.placeholder("id"));
    this.updateRow = database.update(payments).set(set).where(id).prepare();
    const still = eq(payments.status, sql.placeholder("from"));
    this.updateRowIf = database
      .update(payments)
      .set(set)
      .where(and(id, still))
      .returning({ id: payments.id })
      .prepare();
    const unpaid = and(eq(payments.payer, sql.placeholder("payer")), eq(payments.status, "unpaid"));
    this.unpaidRow = database
      .select({ id: payments.id })
      .from(payments)
      .where(and(unpaid, gte(payments.updatedAt, sql`${sql.placeholder("since")}`)))
      .limit(1)
      .prepare();
  }

  async claim(payment: NewPayment): Promise<number | undefined> {
    const rows = this.insertPending.all(claimValues(payment, Date.now()));
    return rows[0]?.id;
  }

  async update(id: number, update: PaymentUpdate): Promise<void> {
    this.updateRow.run(updateValues(id, update, Date.now()));
  }

  async updateIf(id: number, from: PaymentStatus, update: PaymentUpdate): Promise<boolean> {
    return this.updateRowIf.all({ ...updateValues(id, update, Date.now()), from }).length > 0;
  }

  async listByStatus(statuses: readonly PaymentStatus[], afterId: number, limit: number): Promise<PaymentRecord[]> {
    const rows = this.database
      .select()
      .from(payments)
      .where(and(inArray(payments.status, [...statuses]), gt(payments.id, afterId)))
      .orderBy(asc(payments.id))
      .limit(limit)
      .all();
    return rows.map(paymentRecord);
  }

  async newestByStatus(statuses: readonly PaymentStatus[], since: Date, limit: number): Promise<PaymentRecord[]> {
    const rows = this.database
      .select()
      .from(payments)
      .where(and(inArray(payments.status, [...statuses]), gte(payments.createdAt, since)))
      .orderBy(desc(payments.id))
      .limit(limit)
      .all();
    return rows.map(paymentRecord);
  }

  async findByNonce(nonce: string): Promise<PaymentRecord | undefined> {
    const row = this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase())).get();
    return row && paymentRecord(row);
  }

  async unpaidSince(payer: string, since: Date): Promise<boolean> {
    return this.unpaidRow.get({ payer, since: since.getTime() }) !== undefined;
  }

  async unpaidPayers(since: Date): Promise<UnpaidPayer[]> {
    const rows = this.database.$client
      .prepare<[number], { payer: string; amount: string }>(
        "select payer, coalesce(unpaid_amount, '0') as amount from payments where status = 'unpaid' and created_at >= ?",
      )
      .all(since.getTime());
    // Summed here as bigint: the amounts are decimal text of any size.
    const byPayer = new Map<string, UnpaidPayer>();
    for (const { payer, amount } of rows) {
      const sum = byPayer.get(payer) ?? { payer, count: 0, amount: 0n };
      sum.count += 1;
      sum.amount += BigInt(amount);
      byPayer.set(payer, sum);
    }
    return [...byPayer.values()].sort((a, b) => (b.amount > a.amount ? 1 : b.amount < a.amount ? -1 : 0));
  }

  /**
   * SQLite's integers stop at 2^63 and the amounts are decimal text of any size, so the rows are read in the
   * groups' order and summed here as bigint, exactly, one group in memory at a time.
   */
  async report(since: Date, period: ReportPeriod): Promise<LedgerReportRow[]> {
    const format = period === "day" ? "%Y-%m-%d" : "%Y-%m-%dT%H:00Z";
    const rows = this.database.$client
      .prepare<[string, number], Omit<LedgerReportRow, "count" | "amount"> & { amount: string }>(
        `select strftime(?, created_at / 1000, 'unixepoch') as period, endpoint, model, status, method,
          coalesce(settled_amount, unpaid_amount, amount) as amount
        from payments where created_at >= ? order by 1, coalesce(endpoint, ''), coalesce(model, ''), status, method`,
      )
      .iterate(format, since.getTime());
    const report: LedgerReportRow[] = [];
    for (const { amount, ...group } of rows) {
      const last = report.at(-1);
      const same =
        last?.period === group.period &&
        last.endpoint === group.endpoint &&
        last.model === group.model &&
        last.status === group.status &&
        last.method === group.method;
      if (same) {
        last.count += 1;
        last.amount += BigInt(amount);
      } else report.push({ ...group, count: 1, amount: BigInt(amount) });
    }
    return report;
  }
}
