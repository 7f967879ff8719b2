/** A window as the store counts it: its length and how many requests it admits. */
export interface CountedWindow {
  durationMs: number;
  limit: number;
}

/**
 * Requests counted per key (a scope and a caller), one row per request (a sliding-window log) shared by every
 * instance over the database. `take` counts a request only if every window still has room, as one atomic step per
 * key (one statement on SQLite, one function call holding a lock per key on PostgreSQL): of concurrent requests
 * under one key, on any instances, no more than the limits are counted.
 */
export interface WindowLog {
  /** The requests in the window and the time of the oldest (ms), for each window. */
  count(key: string, windows: readonly CountedWindow[], now: number): Promise<{ used: number; oldest?: number }[]>;
  /** Counts one request if every window has room; its id, or undefined. Also drops rows older than every window. */
  take(key: string, windows: readonly CountedWindow[], now: number): Promise<number | undefined>;
  /** Uncounts a request that was not served (it failed upstream). */
  give(id: number): Promise<void>;
}
