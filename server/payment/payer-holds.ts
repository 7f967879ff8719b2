/**
 * What a payer may owe at once. A payment that can be settled after bytes go out (`upto`, an `exact` stream in
 * overlap order) is credit until it is taken: each holds its signed maximum against what its payer can pay (the
 * balance read at verify, and for `upto` the Permit2 allowance), in the database, so that the sum of one payer's
 * in-flight maxima never exceeds it, on any instance. A hold ends when its payment is taken, or at `expiresAt` (its
 * process died).
 */
export interface PayerHold {
  /** The payment's ledger key (its nonce). */
  key: string;
  payer: string;
  amount: bigint;
  /**
   * What the payer can pay, as read for this payment: the hold is taken only if all its live holds fit in it. None
   * (a payment settled before its answer leaves, whose funds were not read): taken only if the payer holds nothing
   * else, so that it cannot spend what another payment's hold counts on.
   */
  capacity?: bigint;
  /** The hold's capacity rests on an EIP-2612 permit this payment carries (not yet on chain): one such at a time. */
  sponsored: boolean;
  /** Epoch ms. */
  expiresAt: number;
}

export interface PayerHoldStore {
  /**
   * Takes `hold` if the payer's live holds and it add up to at most its capacity (without one: if there are none),
   * and no other live hold of the
   * payer rests on a sponsored permit when this one does (one transaction, serialised per payer): whether it was
   * taken. Expired holds of the payer are dropped first.
   */
  hold(hold: PayerHold, now: number): Promise<boolean>;
  /** Ends the hold under `key` (nothing when there is none). */
  release(key: string): Promise<void>;
  /** What `payer`'s live holds add up to, and whether one rests on a sponsored permit. */
  heldBy(payer: string, now: number): Promise<{ amount: bigint; sponsored: boolean }>;
}
