/** The reason a stream is cancelled with when the shutdown's grace has run out: it is billed what it passed on. */
export class ShutdownCut extends Error {
  constructor() {
    super("the service is shutting down: the shutdown grace ran out");
    this.name = "ShutdownCut";
  }
}

/**
 * A process's way out on SIGTERM: once `begin` is called it takes no new requests (the node handler answers them
 * 503), counts down the requests being answered and the work that outlives its answer (a settlement beside a
 * stream, a ledger record), and, at the grace's end, cuts the streams still running (`deadline`), which end with an
 * error event and are billed what they passed on. `finish` resolves when all of it is done, or given up on.
 */
export class Drain {
  private draining = false;
  private inFlight = 0;
  private readonly pending = new Set<Promise<unknown>>();
  private readonly cut = new AbortController();
  private waiters: (() => void)[] = [];
  private readonly stops: (() => Promise<void> | void)[] = [];

  /** Whether the process is on its way out: new requests are refused. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Aborted when the grace has run out: streams still running end now. */
  get deadline(): AbortSignal {
    return this.cut.signal;
  }

  /** A request being answered; the function returned ends it (once). */
  enter(): () => void {
    this.inFlight += 1;
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inFlight -= 1;
      this.check();
    };
  }

  /** Work that outlives its answer: the exit waits for it. Returns it, unchanged. */
  keep<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    const done = () => {
      this.pending.delete(work);
      this.check();
    };
    work.then(done, done);
    return work;
  }

  /** Periodic work to stop on the way out (the background reconciliation), after the requests are done. */
  onStop(stop: () => Promise<void> | void): void {
    this.stops.push(stop);
  }

  /** What is still under way: requests being answered, and work that outlives its answer. */
  get underWay(): { requests: number; work: number } {
    return { requests: this.inFlight, work: this.pending.size };
  }

  private check(): void {
    if (this.inFlight > 0 || this.pending.size > 0) return;
    for (const resolve of this.waiters.splice(0)) resolve();
  }

  /** Resolves once nothing is under way, or after `withinMs`: whether nothing is. */
  private quiet(withinMs: number): Promise<boolean> {
    if (this.inFlight === 0 && this.pending.size === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), withinMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  begin(): void {
    this.draining = true;
  }

  /**
   * Drains: waits up to `graceMs` for what is under way; then cuts the streams still running and waits up to
   * `afterCutMs` more for them to be billed and for their settlements; then stops the periodic work. Returns
   * whether it ended with nothing under way, and whether streams had to be cut.
   */
  async finish(graceMs: number, afterCutMs: number): Promise<{ drained: boolean; cut: boolean }> {
    this.begin();
    let cut = false;
    let drained = await this.quiet(graceMs);
    if (!drained) {
      cut = true;
      this.cut.abort(new ShutdownCut());
      drained = await this.quiet(afterCutMs);
    }
    for (const stop of this.stops) await stop();
    return { drained, cut };
  }
}
