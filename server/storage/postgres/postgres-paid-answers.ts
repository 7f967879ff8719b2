import { answerJson, keptAnswer, type KeptAnswer, type PaidAnswerStore } from "../../payment/paid-answers";
import type { PostgresDatabase } from "./open-postgres";

/** Kept answers on PostgreSQL: ON CONFLICT DO NOTHING keeps the first answer under a payer's id, on any instance. */
export class PostgresPaidAnswers implements PaidAnswerStore {
  constructor(private readonly database: PostgresDatabase) {}

  async keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void> {
    await this.database.$client.query("delete from paid_answers where expires_at <= $1", [new Date(now)]);
    await this.database.$client.query(
      `insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at) values ($1, $2, $3, $4, $5, $6)
        on conflict (payer, payment_id) do nothing`,
      [answer.payer, answer.paymentId, answer.nonce, answer.request, answerJson(answer), new Date(expiresAt)],
    );
  }

  async find(payer: string, paymentId: string, now: number): Promise<KeptAnswer | undefined> {
    const { rows } = await this.database.$client.query<{
      payer: string;
      paymentId: string;
      nonce: string;
      request: string;
      answer: string;
    }>(
      `select payer, payment_id as "paymentId", nonce, request, answer from paid_answers
        where payer = $1 and payment_id = $2 and expires_at > $3`,
      [payer, paymentId, new Date(now)],
    );
    return rows[0] && keptAnswer(rows[0]);
  }
}
