import type { PrepaidKeyStatus } from "../core/payment-status";

/** What an owner or the operator sees of a prepaid key: everything but its code, which is never stored. */
export interface KeyRecord {
  id: number;
  /** The code's first characters (`paysvc_pk_` and six more); null on keys sold before they were kept. */
  codePrefix: string | null;
  /** The wallet that paid for it; null when unknown. */
  owner: string | null;
  model: string;
  status: PrepaidKeyStatus;
  totalTokens: number;
  usedTokens: number;
  reservedTokens: number;
  /** The limits its buyer or owner set (JSON), if any. */
  limits: string | null;
  createdAt: Date;
  lastUsedAt: Date | null;
}

/** Which keys: one key, a wallet's keys, the keys whose code starts so; every key sold when empty. */
export interface KeyFilter {
  id?: number;
  owner?: string;
  codePrefix?: string;
}

/**
 * A key changed by its owner, or by the operator (`owner` undefined). Each change is one statement on the key row,
 * conditioned on its owner and state, so a key of another wallet, or a void one, is not found rather than changed.
 */
export interface OwnedKeyStore {
  /** Keys sold (issued and not void), newest first, at most `limit`. */
  list(filter: KeyFilter, limit?: number): Promise<KeyRecord[]>;
  /**
   * A new code for a usable key (active or used up): the old one stops naming it at once, for every instance over
   * the database (the row's hash is replaced); its budget, reservations and limits stay. False if none was found.
   */
  rotate(id: number, owner: string | undefined, code: string): Promise<boolean>;
  /** Revokes a usable key for good: its tokens left stay on record, calls in flight settle. False if none. */
  revoke(id: number, owner: string | undefined): Promise<boolean>;
  /**
   * Adds `tokens` to the owner's usable key of `model` (a used-up key is active again). False if none was found.
   * Written once the top-up's payment is taken (prepaid-top-up.ts).
   */
  topUp(id: number, owner: string, model: string, tokens: number): Promise<boolean>;
  /** Stores a usable key's limits (JSON, or null for none). False if none was found. */
  setLimits(id: number, owner: string | undefined, limits: string | null): Promise<boolean>;
}

/** The statuses of keys that were sold: every one but a void key (never paid) or a pending one (never revealed). */
export const soldKeyStatuses = ["active", "disabled", "revoked"] as const;

/** The statuses of keys that a code still names (revoked and void keys name nothing). */
export const usableKeyStatuses = ["active", "disabled"] as const;

/** How many characters of a code are kept to tell keys apart: the `paysvc_pk_` prefix and six (36 bits) more. */
export const CODE_PREFIX_LENGTH = 16;
