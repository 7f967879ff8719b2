import { eq, sql } from "drizzle-orm";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import type { AppDatabase } from "../storage/database";
import { payments, type PaymentStatus } from "../storage/schema";

export interface NewPayment {
  nonce: string;
  payer: string;
  amount: bigint;
  network: string;
  resource: string;
  bodyHash: string;
  quoteMs: number;
}

export interface PaymentUpdate {
  status: PaymentStatus;
  failureReason?: string;
  transaction?: string;
  verifyMs?: number;
  upstreamMs?: number;
  settleMs?: number;
}

/**
 * The payments ledger. Each method is one statement, compiled once; the unique nonce is the double-spend guard.
 * Placeholders inside sql`` are bound as given: times in ms, as the timestamp_ms columns hold them.
 */
export class PaymentLedger {
  private readonly insertPending;
  private readonly updateRow;

  constructor(private readonly database: AppDatabase) {
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

  /** Records a payment as pending; returns its id, or undefined when the nonce was already recorded. */
  claim(payment: NewPayment): number | undefined {
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

  update(id: number, update: PaymentUpdate): void {
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

  findByNonce(nonce: string) {
    return this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase())).get();
  }
}

function round(value: number | undefined): number | null {
  return value === undefined ? null : Math.round(value);
}
