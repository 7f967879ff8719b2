import { eq } from "drizzle-orm";
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

/** The payments ledger. Each method is one statement; the unique nonce is the double-spend guard. */
export class PaymentLedger {
  constructor(private readonly database: AppDatabase) {}

  /** Records a payment as pending; returns its id, or undefined when the nonce was already recorded. */
  claim(payment: NewPayment): number | undefined {
    const now = new Date();
    const rows = this.database
      .insert(payments)
      .values({
        nonce: payment.nonce,
        payer: payment.payer,
        amount: payment.amount.toString(),
        network: payment.network,
        resource: payment.resource,
        bodyHash: payment.bodyHash,
        status: "pending",
        quoteMs: Math.round(payment.quoteMs),
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing({ target: payments.nonce })
      .returning({ id: payments.id })
      .all();
    return rows[0]?.id;
  }

  update(id: number, update: PaymentUpdate): void {
    this.database
      .update(payments)
      .set({
        ...update,
        verifyMs: round(update.verifyMs),
        upstreamMs: round(update.upstreamMs),
        settleMs: round(update.settleMs),
        updatedAt: new Date(),
      })
      .where(eq(payments.id, id))
      .run();
  }

  findByNonce(nonce: string) {
    return this.database.select().from(payments).where(eq(payments.nonce, nonce.toLowerCase())).get();
  }
}

function round(value: number | undefined): number | undefined {
  return value === undefined ? undefined : Math.round(value);
}
