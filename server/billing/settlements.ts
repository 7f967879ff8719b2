import type { Finished, PreparedAnswer } from "./payment-method";

type StreamAnswer = Extract<PreparedAnswer, { kind: "stream" }>;
type JsonAnswer = Extract<PreparedAnswer, { kind: "json" }>;

/** What a settlement drives in its session (x402-session.ts): the ways an answer's payment is taken. */
export interface SettlingSession {
  /** Takes `amount` before the answer leaves (a whole answer, or a stream not passed on before it is paid). */
  takeBeforeAnswer(answer: PreparedAnswer, amount: bigint): Promise<Finished>;
  /** Passes a stream on while its price is taken (stream-while-settling.ts). */
  takeWhileStreaming(answer: StreamAnswer): Promise<Finished>;
  /** Passes a stream on, taking what it used as its usage event passes (usage-stream-settlement.ts). */
  takeOnUsage(answer: StreamAnswer): Promise<Finished>;
  /** The price the payment was accepted for. */
  readonly price: bigint;
  /** What a whole answer used, at the call's rates (never more than the price; the price when it says nothing). */
  used(answer: JsonAnswer): bigint;
}

/**
 * How an accepted payment is taken against its answer, an object the payment chooses as it is accepted
 * (AcceptedPayment.settles): the session hands it the answer and follows it, asking nothing about the scheme.
 */
export interface SettlementMode {
  finish(session: SettlingSession, answer: PreparedAnswer): Promise<Finished>;
}

/** At its price, before the answer leaves: a stream's first byte waits for it. */
export const settledBeforeAnswer: SettlementMode = {
  finish: (session, answer) => session.takeBeforeAnswer(answer, session.price),
};

/** At its price, a stream passed on while it is taken (overlap order); a whole answer still before it leaves. */
export const settledWhileStreaming: SettlementMode = {
  finish: (session, answer) =>
    answer.kind === "stream" ? session.takeWhileStreaming(answer) : session.takeBeforeAnswer(answer, session.price),
};

/** For what the answer used, which it states: a whole answer before it leaves, a stream as its usage event passes. */
export const chargedOnUsage: SettlementMode = {
  finish: (session, answer) =>
    answer.kind === "stream" ? session.takeOnUsage(answer) : session.takeBeforeAnswer(answer, session.used(answer)),
};
