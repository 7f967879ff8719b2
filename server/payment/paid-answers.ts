/** A paid answer as it is kept for a retry: what the caller got, and what it was for. */
export interface KeptAnswer {
  payer: string;
  /** The payment-identifier the caller chose (unique per payer). */
  paymentId: string;
  /** The nonce of the payment that paid for it. */
  nonce: string;
  /** The resource and the body's SHA-256: a retry must ask for the same. */
  request: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The request a payment-identifier is held for while it is answered. */
export type HeldRequest = Pick<KeptAnswer, "payer" | "paymentId" | "nonce" | "request">;

/**
 * What holding a payer's id finds: it is now held for this payment; another payment holds it (its request is
 * still being answered); or an answer is kept under it.
 */
export type IdentifierHold =
  { kind: "held" } | { kind: "busy"; request: string } | { kind: "kept"; answer: KeptAnswer };

/**
 * Answers kept for the x402 payment-identifier extension, shared by every instance over the database. A paid
 * request first holds its payer's id (a row with no answer yet), so that a retry signed anew while it is answered
 * is not charged a second time; its whole answer is then kept in that row, or the row let go. Rows expire: a held
 * one whose process died frees its id then.
 */
export interface PaidAnswerStore {
  /** Holds the id for `held.nonce` until `expiresAt`, unless a live row has it (an expired one is replaced). */
  hold(held: HeldRequest, now: number, expiresAt: number): Promise<IdentifierHold>;
  /** Keeps the answer in the row its payment holds, until `expiresAt`; a row held by another payment stays. */
  keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void>;
  /** Lets go of the id `held.nonce` holds without an answer (its request was not delivered whole). */
  release(held: HeldRequest): Promise<void>;
}

/** The `answer` column of a row that holds its id for a request still being answered. */
export const HELD = "";

/** How a kept answer is written in the store's `answer` column. */
export function answerJson(answer: KeptAnswer): string {
  return JSON.stringify({ status: answer.status, headers: answer.headers, body: answer.body });
}

/** What a row found by `hold` says: held by another request (or by the same payment sent twice), or kept. */
export function heldOrKept(row: HeldRow): IdentifierHold {
  return row.answer === HELD ? { kind: "busy", request: row.request } : { kind: "kept", answer: keptAnswer(row) };
}

type HeldRow = { payer: string; paymentId: string; nonce: string; request: string; answer: string };

function keptAnswer(row: HeldRow): KeptAnswer {
  const { status, headers, body } = JSON.parse(row.answer) as Pick<KeptAnswer, "status" | "headers" | "body">;
  const { payer, paymentId, nonce, request } = row;
  return { payer, paymentId, nonce, request, status, headers, body };
}
