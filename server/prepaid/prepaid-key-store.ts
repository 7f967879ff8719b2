import { randomInt } from "node:crypto";
import type { PrepaidKeyStatus } from "../core/payment-status";
import { hashPrepaidCode } from "./prepaid-code";
import type { KeyLimits } from "../limits/key-limits";
import { CODE_PREFIX_LENGTH } from "./owned-keys";

export interface PrepaidKey {
  id: number;
  codeHash: string;
  model: string;
  totalTokens: number;
  usedTokens: number;
  status: PrepaidKeyStatus;
  /** The rate limits its buyer asked for, as stored (JSON), if any (limits/key-limits.ts). */
  limits: string | null;
}

/** Tokens held for one call: `keyId` and `id` name it, for extending and settling it. */
export interface Reservation {
  keyId: number;
  id: number;
  /** The output tokens the call may produce: what was asked for, or less when less was left. */
  allowedOutput: number;
}

export interface KeyBalance {
  total: number;
  used: number;
  reserved: number;
  remaining: number;
}

/**
 * The keys sold since a time, and what the keys still usable owe their holders (whenever they were sold), for the
 * ledger report. A key counts as sold once issued and not voided (a key whose payment failed is void).
 */
export interface PrepaidSummary {
  keysSold: number;
  tokensSold: number;
  /** Keys with tokens left to use. */
  activeKeys: number;
  /** Their tokens not used yet (what calls in flight hold included). */
  tokensOutstanding: number;
}

export interface TokenRequest {
  inputTokens: number;
  maxOutputTokens: number;
}

/**
 * Prepaid keys and their token budgets, the same data on both engines: a key row counts what it has used and what
 * its reservations hold (expired ones too, until a sweep ends them). The invariant (used + reserved <= total) is
 * kept by the database, for every instance over it at once: reserving and settling are each one atomic step
 * there, never read-then-write.
 */
export interface PrepaidKeyStore {
  /**
   * A new key, usable at once by whoever holds its code. Written before its payment settles: the code is only
   * revealed after, so nothing is left to write once the payment is taken, and a failed settlement voids it.
   */
  issue(
    code: string,
    model: string,
    totalTokens: number,
    paymentNonce: string | undefined,
    extra?: KeyExtras,
  ): Promise<number>;
  /** The rate limits a key's buyer asked for, as stored (JSON), if any; undefined for no such key. */
  limitsOf(keyId: number): Promise<string | null | undefined>;
  /** A key whose payment never settled: void for good (its code was never given out, so it was never used). */
  voidUnpaid(id: number): Promise<void>;
  /**
   * The key bought with the payment `paymentNonce`, which reconciliation found will never be settled (its code was
   * given out while the settlement's outcome was unknown): void for good, used or not. True when there was one.
   */
  voidBoughtWith(paymentNonce: string): Promise<boolean>;
  /** The usable or used-up key a code names; pending and void keys do not exist for callers. */
  findByCode(code: string): Promise<PrepaidKey | undefined>;
  /** What the key has used and what its live reservations hold, its expired ones swept first. */
  balance(keyId: number, now?: number): Promise<KeyBalance>;
  /**
   * Holds the input plus up to `maxOutputTokens` of the budget of the active key that `code` names, if it is a key
   * for `model`, lowering the output to what is left (at least one token). Undefined when there is no such key or
   * not even input + 1 is free; `findByCode` then tells which.
   */
  reserve(code: string, model: string, tokens: TokenRequest, ttlMs: number): Promise<Reservation | undefined>;
  /** Keeps a reservation alive while its call runs. */
  extend(reservation: Reservation, ttlMs: number): Promise<void>;
  /**
   * Ends a reservation, charging `usedTokens` of it (never more than it held) and disabling the key once its
   * budget is spent. Charging 0 releases it whole. A reservation already ended is not charged twice. Answers the
   * tokens the key has left after it, read from the row it updated (reservations expired but not swept yet count).
   */
  settle(reservation: Reservation, usedTokens: number): Promise<number>;
  /** Ends every expired reservation (of a process that died), taking what it held off its key's count. */
  deleteExpired(now?: number): Promise<void>;
  /** The keys sold since `since`, and the tokens outstanding on every active key. */
  summary(since: Date): Promise<PrepaidSummary>;
}

/** What a new key may carry beside its budget: the limits its buyer asked for, the wallet that paid for it. */
export interface KeyExtras {
  limits?: KeyLimits;
  owner?: string;
}

/** The row a new key is, on both engines: active, stored by its code's hash (and first characters) only. */
export function newKeyValues(
  code: string,
  model: string,
  totalTokens: number,
  paymentNonce: string | undefined,
  { limits, owner }: KeyExtras = {},
) {
  const now = new Date();
  return {
    codeHash: hashPrepaidCode(code),
    codePrefix: code.slice(0, CODE_PREFIX_LENGTH),
    owner: owner ?? null,
    model,
    totalTokens,
    status: "active" as const,
    paymentNonce,
    limits: limits && Object.keys(limits).length > 0 ? JSON.stringify(limits) : null,
    createdAt: now,
    updatedAt: now,
  };
}

/** A reservation id: random (48 bits), so that none takes the id of one ended before it (see the schemas). */
export function randomReservationId(): number {
  return randomInt(1, 2 ** 48);
}

/**
 * Runs `insert` with an id from `draw`, drawing again when another live reservation of the key holds that id
 * (about one chance in 2^48; `collided` recognises the engine's primary-key error), at most three times.
 */
export async function withReservationId<T>(
  draw: () => number,
  collided: (error: unknown) => boolean,
  insert: (id: number) => Promise<T>,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await insert(draw());
    } catch (error) {
      if (attempt >= 3 || !collided(error)) throw error;
    }
  }
}
