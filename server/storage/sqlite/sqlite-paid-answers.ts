import type Database from "better-sqlite3";
import {
  answerJson,
  HELD,
  heldOrKept,
  type HeldRequest,
  type IdentifierHold,
  type KeptAnswer,
  type PaidAnswerStore,
} from "../../payment/paid-answers";
import type { SqliteDatabase } from "./open-sqlite";

const statements = {
  /** Takes the id for a request: a new row, or one whose time is up (replaced). Returns a row when it took it. */
  hold: `insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at)
      values (:payer, :paymentId, :nonce, :request, '${HELD}', :expiresAt)
    on conflict (payer, payment_id) do update
      set nonce = excluded.nonce, request = excluded.request, answer = excluded.answer, expires_at = excluded.expires_at
      where paid_answers.expires_at <= :now
    returning 1`,
  row: `select payer, payment_id as paymentId, nonce, request, answer from paid_answers
    where payer = :payer and payment_id = :paymentId`,
  /** Fills the row its payment holds; a row held or kept by another payment stays as it is. */
  keep: `insert into paid_answers (payer, payment_id, nonce, request, answer, expires_at)
      values (:payer, :paymentId, :nonce, :request, :answer, :expiresAt)
    on conflict (payer, payment_id) do update set answer = excluded.answer, expires_at = excluded.expires_at
      where paid_answers.nonce = excluded.nonce and paid_answers.answer = '${HELD}'`,
  release: `delete from paid_answers where payer = :payer and payment_id = :paymentId and nonce = :nonce
    and answer = '${HELD}'`,
  sweep: `delete from paid_answers where expires_at <= :now`,
};

/** Kept answers on SQLite: each step one statement, or (holding an id) one IMMEDIATE transaction. */
export class SqlitePaidAnswers implements PaidAnswerStore {
  private readonly holdId: (held: HeldRequest, now: number, expiresAt: number) => IdentifierHold;
  private readonly prepared;

  constructor(database: SqliteDatabase) {
    const client: Database.Database = database.$client;
    const prepared = {
      hold: client.prepare(statements.hold).pluck(),
      row: client.prepare(statements.row),
      keep: client.prepare(statements.keep),
      release: client.prepare(statements.release),
      sweep: client.prepare(statements.sweep),
    };
    this.prepared = prepared;
    const holding = client.transaction((held: HeldRequest, now: number, expiresAt: number): IdentifierHold => {
      if (prepared.hold.get({ ...held, now, expiresAt }) !== undefined) return { kind: "held" };
      return heldOrKept(prepared.row.get(held) as Parameters<typeof heldOrKept>[0]);
    });
    this.holdId = (held, now, expiresAt) => holding.immediate(held, now, expiresAt);
  }

  async hold(held: HeldRequest, now: number, expiresAt: number): Promise<IdentifierHold> {
    return this.holdId(request(held), now, expiresAt);
  }

  async keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void> {
    this.prepared.sweep.run({ now });
    this.prepared.keep.run({ ...request(answer), answer: answerJson(answer), expiresAt });
  }

  async release(held: HeldRequest): Promise<void> {
    this.prepared.release.run(request(held));
  }
}

/** A row's key and request, the statements' named parameters (an answer's status, headers and body are not). */
function request({ payer, paymentId, nonce, request }: HeldRequest): HeldRequest {
  return { payer, paymentId, nonce, request };
}
