import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import {
  claimValues,
  updateValues,
  type NewPayment,
  type PaymentLedger,
  type PaymentRecord,
  type PaymentUpdate,
} from "../../payment/payment-ledger";
import type { SqliteDatabase } from "./open-sqlite";
import { payments } from "./schema";

/**
 * The payments ledger on SQLite. Each method is one statement, compiled once. Placeholders inside sql`` are bound
 * as given: times in ms, as the timestamp_ms columns hold them.
 */
export class SqlitePaymentLedger implements PaymentLedger {
  private readonly insertPending;
  private readonly updateRow;

  constructor(private readonly database: SqliteDatabase) {
    const at = sql`${sql.placeholder("at")}`;
    this.insertPending = database
      .insert(payments)
      .values({
        nonce: sql.placeholder("nonce"),
        payer: sql.placeholder("payer"),
        amount: sql.placeholder("amount"),
        network: sql.placeholder("network"),
        resource: sql.placeholder("resource"),
        bodyHash: sql.placeholder("bodyHash"),
        status: "pending",
        quoteMs: sql.placeholder("quoteMs"),
        createdAt: at,
        updatedAt: at,
      })
      .onConflictDoNothing({ target: payments.nonce })
      .returning({ id: payments.id })
      .prepare();
    // A field left out of an update keeps its value.
    const keep = (column: SQLiteColumn, name: string) => sql`coalesce(${sql.placeholder(name)}, ${column})`;
    this.updateRow = database
      .update(payments)
      .set({
        status: sql`${sql.placeholder("status")}`,
        failureReason: keep(payments.failureReason, "failureReason"),
        transaction: keep(payments.transaction, "transaction"),
        verifyMs: keep(payments.verifyMs, "verifyMs"),
        upstreamMs: keep(payments.upstreamMs, "upstreamMs"),
        settleMs: keep(payments.settleMs, "settleMs"),
        updatedAt: at,
      })
      .where(eq(payments.id, sql.placeholder("id")))
      .prepare();
  }

  async claim(payment: NewPayment): Promise<number | undefined> {
    const rows = this.insertPending.all(claimValues(payment, Date.now()));
    return rows[0]?.id;
  }

  async update(id: number, update: PaymentUpdate): Promise<void> {
    this.updateRow.run(updateValues(id, update, Date.now()));
  }

  async findByNonce(nonce: string): Promise<PaymentRecord | undefined> {
    const row = this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase())).get();
    return row && { ...row, amount: BigInt(row.amount) };
  }
}
