import { freeChat } from "../../config/free-tier";

export interface WindowUsage {
  name: string;
  limit: number;
  used: number;
  /** Seconds until the oldest counted request leaves the window (0 when none is counted). */
  resetSeconds: number;
}

/** A window as the store counts it: its length and how many requests it admits. */
export interface CountedWindow {
  durationMs: number;
  limit: number;
}

/**
 * The free chat's requests counted per caller address, one row per request (a sliding-window log) shared by every
 * instance over the database. `take` counts a request only if every window still has room, as one atomic step
 * per address: of concurrent requests from one address, on any instances, no more than the limits are counted.
 */
export interface FreeChatLog {
  /** The requests in the window and the time of the oldest (ms), for each window. */
  count(address: string, windows: readonly CountedWindow[], now: number): Promise<{ used: number; oldest?: number }[]>;
  /** Counts one request if every window has room; its id, or undefined. Also drops rows older than every window. */
  take(address: string, windows: readonly CountedWindow[], now: number): Promise<number | undefined>;
  /** Uncounts a request that failed upstream. */
  give(id: number): Promise<void>;
}

/** The free chat's per-address windows (10 per 10 minutes, 100 per day). */
export class FreeChatWindows {
  constructor(private readonly log: FreeChatLog) {}

  async usage(address: string, now = Date.now()): Promise<WindowUsage[]> {
    const counts = await this.log.count(address, freeChat.windows, now);
    return freeChat.windows.map((window, index) => {
      const { used, oldest } = counts[index] ?? { used: 0 };
      const resetSeconds = oldest === undefined ? 0 : Math.max(1, Math.ceil((oldest + window.durationMs - now) / 1000));
      return { name: window.name, limit: window.limit, used, resetSeconds };
    });
  }

  take(address: string, now = Date.now()): Promise<number | undefined> {
    return this.log.take(address, freeChat.windows, now);
  }

  give(id: number): Promise<void> {
    return this.log.give(id);
  }
}
