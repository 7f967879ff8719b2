import { sql } from "drizzle-orm";
import { answerJson, keptAnswer, type KeptAnswer, type PaidAnswerStore } from "../../payment/paid-answers";
import type { SqliteDatabase } from "./open-sqlite";

/** Kept answers on SQLite: the first kept under a payer's id wins until it expires; expired ones are swept on keep. */
export class SqlitePaidAnswers implements PaidAnswerStore {
  constructor(private readonly database: SqliteDatabase) {}

  async keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void> {
    this.database.run(sql`delete from paid_answers where expires_at <= ${now}`);
    this.database.run(sql`
      insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at)
      values (${answer.payer}, ${answer.paymentId}, ${answer.nonce}, ${answer.request}, ${answerJson(answer)}, ${expiresAt})
      on conflict (payer, payment_id) do nothing`);
  }

  async find(payer: string, paymentId: string, now: number): Promise<KeptAnswer | undefined> {
    const row = this.database.get<{ payer: string; paymentId: string; nonce: string; request: string; answer: string }>(
      sql`select payer, payment_id as paymentId, nonce, request, answer from paid_answers
        where payer = ${payer} and payment_id = ${paymentId} and expires_at > ${now}`,
    );
    return row && keptAnswer(row);
  }
}
