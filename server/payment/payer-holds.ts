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
  /**
   * What the payer's ended holds had held (heldBy's `endedAmount`) before its capacity was read: those ended since
   * count as still held. A hold ends once its payment is taken, so funds read before that may no longer be there;
   * read after, they are counted twice (never too few).
   */
  endedAmountBefore?: bigint;
  /** The hold's capacity rests on an EIP-2612 permit this payment carries (not yet on chain): one such at a time. */
  sponsored: boolean;
  /** Epoch ms. */
  expiresAt: number;
}

export interface PayerHoldStore {
  /**
   * Takes `hold` if the payer's live holds, those ended since `endedAmountBefore`, and it add up to at most its
   * capacity (without one: if there are none), and no other live hold of the payer rests on a sponsored permit when
   * this one does (one transaction, serialised per payer): whether it was taken. Expired holds of the payer are
   * dropped first (they do not count as ended: their process died).
   */
  hold(hold: PayerHold, now: number): Promise<boolean>;
  /** Ends the hold under `key` (nothing when there is none), counting it and its amount among its payer's ended holds. */
  release(key: string): Promise<void>;
  /**
   * The hold under `key` holds at most `amount` from now on: its payment is being taken for that much (an `upto`
   * payment's use, below its maximum). Until it ends, the payer's other payments may count on the rest: the
   * settlement, landed or not, takes no more than `amount` of the funds they read.
   */
  lower(key: string, amount: bigint): Promise<void>;
  /** What `payer`'s live holds add up to, whether one rests on a sponsored permit, and its ended ones. */
  heldBy(payer: string, now: number): Promise<LiveHolds>;
}

/**
 * A payer's live holds (their sum, whether one rests on a sponsored permit), and its ended ones: how many, and what
 * they held when they ended.
 */
export interface LiveHolds {
  amount: bigint;
  sponsored: boolean;
  ended: bigint;
  endedAmount: bigint;
}
