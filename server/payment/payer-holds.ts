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
   * How many of the payer's holds had ended (heldBy's `ended`) before its capacity was read: the hold is taken only if
   * none has ended since. A hold ends once its payment is taken, so funds read before that may no longer be there.
   */
  endedBefore?: bigint;
  /** The hold's capacity rests on an EIP-2612 permit this payment carries (not yet on chain): one such at a time. */
  sponsored: boolean;
  /** Epoch ms. */
  expiresAt: number;
}

export interface PayerHoldStore {
  /**
   * Takes `hold` if the payer's live holds and it add up to at most its capacity (without one: if there are none),
   * no other live hold of the payer rests on a sponsored permit when this one does, and none of its holds has ended
   * since `endedBefore` (one transaction, serialised per payer): whether it was taken. Expired holds of the payer are
   * dropped first (they do not count as ended: their process died).
   */
  hold(hold: PayerHold, now: number): Promise<boolean>;
  /** Ends the hold under `key` (nothing when there is none), counting it among its payer's ended holds. */
  release(key: string): Promise<void>;
  /**
   * The hold under `key` holds at most `amount` from now on: its payment is being taken for that much (an `upto`
   * payment's use, below its maximum). Until it ends, the payer's other payments may count on the rest: the
   * settlement, landed or not, takes no more than `amount` of the funds they read.
   */
  lower(key: string, amount: bigint): Promise<void>;
  /** What `payer`'s live holds add up to, whether one rests on a sponsored permit, and how many have ended. */
  heldBy(payer: string, now: number): Promise<LiveHolds>;
}

/** A payer's live holds (their sum, whether one rests on a sponsored permit) and the count of its ended ones. */
export interface LiveHolds {
  amount: bigint;
  sponsored: boolean;
  ended: bigint;
}
