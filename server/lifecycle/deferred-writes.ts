import { logEvent } from "../core/log";
import { isDatabaseUnavailable } from "../core/database-unavailable";

type Keep = <T>(work: Promise<T>) => Promise<T>;

/** A write waiting for the database, as the log and `abandon` name it. */
interface Waiting {
  event: string;
  details: Record<string, unknown>;
  giveUp: () => void;
}

/**
 * The writes that record what already happened (a settlement on chain, a prepaid call's tokens once its answer is
 * out): they cannot be undone by failing, so a database away for now (database-unavailable.ts) delays them
 * instead. Each is tried at once; while the database is away it is tried again, every `retryMs` doubling up to
 * `maxRetryMs`, until it lands. They are kept (a draining process waits for them within its grace); those still
 * waiting when the process exits are logged one by one (`write_abandoned`) for the operator, and the ledger's
 * reconciliation finds their payments on chain.
 */
export class DeferredWrites {
  private readonly waiting = new Set<Waiting>();

  constructor(
    private readonly keep: Keep,
    private readonly retryMs = 500,
    private readonly maxRetryMs = 5000,
  ) {}

  /** Writes waiting for the database. */
  get pending(): number {
    return this.waiting.size;
  }

  /**
   * Runs `write`: its result when it lands at once, undefined when it waits for the database (it goes on in the
   * background) or failed otherwise (logged as `event`: retrying a wrong statement would not help). Never throws.
   */
  async write<T>(event: string, details: Record<string, unknown>, write: () => Promise<T>): Promise<T | undefined> {
    try {
      return await write();
    } catch (error) {
      if (!isDatabaseUnavailable(error)) {
        logEvent("error", `${event}_failed`, { ...details, error: (error as Error).message });
        return undefined;
      }
      logEvent("warn", "write_deferred", { write: event, ...details, error: (error as Error).message });
      void this.keep(this.retry(event, details, write));
      return undefined;
    }
  }

  /** Tries `write` again until it lands, fails for another reason, or is given up on. */
  private async retry(event: string, details: Record<string, unknown>, write: () => Promise<unknown>) {
    let givenUp = false;
    let wake: (() => void) | undefined;
    const waiting: Waiting = {
      event,
      details,
      giveUp: () => {
        givenUp = true;
        wake?.();
      },
    };
    this.waiting.add(waiting);
    try {
      for (let delay = this.retryMs, attempt = 2; ; delay = Math.min(delay * 2, this.maxRetryMs), attempt++) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, delay);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        if (givenUp) return;
        try {
          await write();
          logEvent("info", "write_recovered", { write: event, ...details, attempts: attempt });
          return;
        } catch (error) {
          if (isDatabaseUnavailable(error)) continue;
          logEvent("error", `${event}_failed`, { ...details, error: (error as Error).message });
          return;
        }
      }
    } finally {
      this.waiting.delete(waiting);
    }
  }

  /** The process is exiting: the writes still waiting are logged, each with what it would have written. */
  abandon(): void {
    for (const waiting of this.waiting) {
      logEvent("error", "write_abandoned", { write: waiting.event, ...waiting.details });
      waiting.giveUp();
    }
  }
}
