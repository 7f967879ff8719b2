/**
 * What the operator's sign-in keeps in the database, shared by every instance over it: the session generation
 * (every session cookie names the generation it was signed in; signing out moves it on, which ends every session
 * on every instance at once) and the sign-in attempts of each client address in its current window.
 */
export interface OperatorStore {
  /** The current session generation (0 before the first sign-out). */
  generation(): Promise<number>;
  /** Moves the generation on, as one atomic step: every session signed before it ends. The new generation. */
  endSessions(): Promise<number>;
  /**
   * Counts one sign-in attempt from `key` as one atomic step: in its window when that started after `now - windowMs`,
   * else as the first of a new window starting now. The window's start (ms) and its attempts, this one included.
   * Also drops the windows of other keys that have ended.
   */
  countSignIn(key: string, now: number, windowMs: number): Promise<{ windowStart: number; attempts: number }>;
}
