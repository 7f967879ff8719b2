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

/**
 * Answers kept for the x402 payment-identifier extension, shared by every instance over the database. The first
 * answer kept under a payer's id stays until it expires; keeping another under it changes nothing.
 */
export interface PaidAnswerStore {
  keep(answer: KeptAnswer, now: number, expiresAt: number): Promise<void>;
  /** The live answer kept under the payer's id, if any. */
  find(payer: string, paymentId: string, now: number): Promise<KeptAnswer | undefined>;
}

/** How a kept answer is written in the store's `answer` column. */
export function answerJson(answer: KeptAnswer): string {
  return JSON.stringify({ status: answer.status, headers: answer.headers, body: answer.body });
}

export function keptAnswer(row: { payer: string; paymentId: string; nonce: string; request: string; answer: string }) {
  const { status, headers, body } = JSON.parse(row.answer) as Pick<KeptAnswer, "status" | "headers" | "body">;
  const { payer, paymentId, nonce, request } = row;
  return { payer, paymentId, nonce, request, status, headers, body };
}
