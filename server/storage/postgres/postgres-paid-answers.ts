import {
  answerJson,
  HELD,
  heldOrKept,
  type HeldRequest,
  type IdentifierHold,
  type KeptAnswer,
  type PaidAnswerStore,
} from "../../payment/paid-answers";
import type { PostgresDatabase } from "./open-postgres";

/**
 * Kept answers on PostgreSQL, the statements of SQLite's (sqlite-paid-answers.ts): the primary key decides which
 * request holds an id, on any instance.
 */
export class PostgresPaidAnswers implements PaidAnswerStore {
  constructor(private readonly database: PostgresDatabase) {}

  async hold(held: HeldRequest, now: number, expiresAt: number): Promise<IdentifierHold> {
    const { payer, paymentId, nonce, request } = held;
    const client = this.database.$client;
    const taken = await client.query(
      `insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at) values ($1, $2, $3, $4, $5, $6)
        on conflict (payer, payment_id) do update
          set nonce = excluded.nonce, request = excluded.request, answer = excluded.answer, expires_at = excluded.expires_at
          where paid_answers.expires_at <= $7
        returning 1`,
      [payer, paymentId, nonce, request, HELD, new Date(expiresAt), new Date(now)],
    );
    if (taken.rowCount) return { kind: "held" };
    const { rows } = await client.query<Parameters<typeof heldOrKept>[0]>(
      `select payer, payment_id as "paymentId", nonce, request, answer from paid_answers
        where payer = $1 and payment_id = $2`,
      [payer, paymentId],
    );
    // Let go of in between (its request was not delivered): taken again.
    return rows[0] ? heldOrKept(rows[0]) : this.hold(held, now, expiresAt);
  }

  async keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void> {
    await this.database.$client.query("delete from paid_answers where expires_at <= $1", [new Date(now)]);
    await this.database.$client.query(
      `insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at) values ($1, $2, $3, $4, $5, $6)
        on conflict (payer, payment_id) do update set answer = excluded.answer, expires_at = excluded.expires_at
          where paid_answers.nonce = excluded.nonce and paid_answers.answer = $7`,
      [answer.payer, answer.paymentId, answer.nonce, answer.request, answerJson(answer), new Date(expiresAt), HELD],
    );
  }

  async release(held: HeldRequest): Promise<void> {
    await this.database.$client.query(
      "delete from paid_answers where payer = $1 and payment_id = $2 and nonce = $3 and answer = $4",
      [held.payer, held.paymentId, held.nonce, HELD],
    );
  }
}
