import { and, asc, desc, eq, gt, gte, inArray, sql } from "drizzle-orm";
import type { PgColumn } from "drizzle-orm/pg-core";
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
import type { PostgresDatabase } from "./open-postgres";
import { payments } from "./schema";

/**
 * The payments ledger on PostgreSQL. Each method is one statement, prepared once per connection; the unique
 * nonce and ON CONFLICT DO NOTHING make the claim atomic across instances.
 */
export class PostgresPaymentLedger implements PaymentLedger {
  private readonly insertPending;
  private readonly updateRow;
  private readonly updateRowIf;
  private readonly unpaidRow;

  constructor(private readonly database: PostgresDatabase) {
    const at = sql`${sql.placeholder("at")}::timestamptz`;
    this.insertPending = database
      .insert(payments)
      .values(claimColumns(at))
      .onConflictDoNothing({ target: payments.nonce })
      .returning({ id: payments.id })
      .prepare("paysvc_payment_claim");
    // A field left out of an update keeps its value.
    const keep = (column: PgColumn, name: string, type: string) =>
      sql`coalesce(${sql.placeholder(name)}::${sql.raw(type)}, ${column})`;
    const set = {
      status: sql`${sql.placeholder("status")}`,
      failureReason: keep(payments.failureReason, "failureReason", "text"),
      transaction: keep(payments.transaction, "transaction", "text"),
      facilitator: keep(payments.facilitator, "facilitator", "text"),
      settledAmount: keep(payments.settledAmount, "settledAmount", "numeric"),
      unpaidAmount: keep(payments.unpaidAmount, "unpaidAmount", "numeric"),
      verifyMs: keep(payments.verifyMs, "verifyMs", "integer"),
      upstreamMs: keep(payments.upstreamMs, "upstreamMs", "integer"),
      settleMs: keep(payments.settleMs, "settleMs", "integer"),
      updatedAt: at,
    };
    const id = eq(payments.id, sql.placeholder("id"));
    this.updateRow = database.update(payments).set(set).where(id).prepare("paysvc_payment_update");
    this.updateRowIf = database
      .update(payments)
      .set(set)
      .where(and(id, eq(payments.status, sql`${sql.placeholder("from")}`)))
      .returning({ id: payments.id })
      .prepare("paysvc_payment_update_if");
    const unpaid = and(eq(payments.payer, sql.placeholder("payer")), eq(payments.status, "unpaid"));
    this.unpaidRow = database
      .select({ id: payments.id })
      .from(payments)
      .where(and(unpaid, gte(payments.updatedAt, sql`${sql.placeholder("since")}::timestamptz`)))
      .limit(1)
      .prepare("paysvc_payment_unpaid_since");
  }

  async claim(payment: NewPayment): Promise<number | undefined> {
    const rows = await this.insertPending.execute(claimValues(payment, new Date()));
    return rows[0]?.id;
  }

  async update(id: number, update: PaymentUpdate): Promise<void> {
    await this.updateRow.execute(updateValues(id, update, new Date()));
  }

  async updateIf(id: number, from: PaymentStatus, update: PaymentUpdate): Promise<boolean> {
    const rows = await this.updateRowIf.execute({ ...updateValues(id, update, new Date()), from });
    return rows.length > 0;
  }

  async listByStatus(statuses: readonly PaymentStatus[], afterId: number, limit: number): Promise<PaymentRecord[]> {
    const rows = await this.database
      .select()
      .from(payments)
      .where(and(inArray(payments.status, [...statuses]), gt(payments.id, afterId)))
      .orderBy(asc(payments.id))
      .limit(limit);
    return rows.map(paymentRecord);
  }

  async newestByStatus(statuses: readonly PaymentStatus[], since: Date, limit: number): Promise<PaymentRecord[]> {
    const rows = await this.database
      .select()
      .from(payments)
      .where(and(inArray(payments.status, [...statuses]), gte(payments.createdAt, since)))
      .orderBy(desc(payments.id))
      .limit(limit);
    return rows.map(paymentRecord);
  }

  async findByNonce(nonce: string): Promise<PaymentRecord | undefined> {
    const [row] = await this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase()));
    return row && paymentRecord(row);
  }

  async unpaidSince(payer: string, since: Date): Promise<boolean> {
    const rows = await this.unpaidRow.execute({ payer, since });
    return rows.length > 0;
  }

  async unpaidPayers(since: Date): Promise<UnpaidPayer[]> {
    const { rows } = await this.database.$client.query<{ payer: string; count: number; amount: string }>(
      `select payer, count(*)::integer as count, coalesce(sum(unpaid_amount), 0)::text as amount
      from payments where status = 'unpaid' and created_at >= $1
      group by payer order by sum(unpaid_amount) desc nulls last, payer`,
      [since],
    );
    return rows.map((row) => ({ ...row, amount: BigInt(row.amount) }));
  }

  async report(since: Date, period: ReportPeriod): Promise<LedgerReportRow[]> {
    const format = period === "day" ? "YYYY-MM-DD" : 'YYYY-MM-DD"T"HH24":00Z"';
    const { rows } = await this.database.$client.query<Omit<LedgerReportRow, "amount"> & { amount: string }>(
      `select to_char(created_at at time zone 'UTC', $1) as period, endpoint, model, status, method,
        count(*)::integer as count, sum(coalesce(settled_amount, unpaid_amount, amount))::text as amount
      from payments where created_at >= $2
      group by 1, 2, 3, 4, 5 order by 1, coalesce(endpoint, ''), coalesce(model, ''), 4, 5`,
      [format, since],
    );
    return rows.map((row) => ({ ...row, amount: BigInt(row.amount) }));
  }
}
