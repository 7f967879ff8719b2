import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { NewPayment, PaymentLedger, PaymentRecord, PaymentUpdate } from "../../payment/payment-ledger";
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
    const at = sql`${sql.placeholder("atMs")}`;
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
    const rows = this.insertPending.all({
      nonce: payment.nonce,
      payer: payment.payer,
      amount: payment.amount.toString(),
      network: payment.network,
      resource: payment.resource,
      bodyHash: payment.bodyHash,
      quoteMs: Math.round(payment.quoteMs),
      atMs: Date.now(),
    });
    return rows[0]?.id;
  }

  async update(id: number, update: PaymentUpdate): Promise<void> {
    this.updateRow.run({
      id,
      status: update.status,
      failureReason: update.failureReason ?? null,
      transaction: update.transaction ?? null,
      verifyMs: round(update.verifyMs),
      upstreamMs: round(update.upstreamMs),
      settleMs: round(update.settleMs),
      atMs: Date.now(),
    });
  }

  async findByNonce(nonce: string): Promise<PaymentRecord | undefined> {
    const row = this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase())).get();
    return row && { ...row, amount: BigInt(row.amount) };
  }
}

function round(value: number | undefined): number | null {
  return value === undefined ? null : Math.round(value);
}
