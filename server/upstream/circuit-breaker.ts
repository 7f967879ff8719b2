/** Closed: calls go through. Open: the provider is skipped. Half open: the cooldown is over, one call tries it. */
export type BreakerState = "closed" | "open" | "half_open";

/**
 * A provider's circuit breaker: after `failureThreshold` failures in a row it is skipped for `cooldownMs`; then one
 * call at a time tries it again, and the first success closes it (a failure opens it for another cooldown).
 */
export class CircuitBreaker {
  private failures = 0;
  private openedAt: number | undefined;
  private trialRunning = false;

  constructor(private readonly settings: { failureThreshold: number; cooldownMs: number }) {}

  state(now = Date.now()): BreakerState {
    if (this.openedAt === undefined) return "closed";
    return now - this.openedAt < this.settings.cooldownMs ? "open" : "half_open";
  }

  /** Failures in a row, for /health. */
  get consecutiveFailures(): number {
    return this.failures;
  }

  /** Whether a call may go to the provider now; in half open, only the first caller's (the trial) may. */
  tryAcquire(now = Date.now()): boolean {
    const state = this.state(now);
    if (state === "closed") return true;
    if (state === "open" || this.trialRunning) return false;
    this.trialRunning = true;
    return true;
  }

  succeeded(): void {
    this.failures = 0;
    this.openedAt = undefined;
    this.trialRunning = false;
  }

  failed(now = Date.now()): void {
    this.failures += 1;
    if (this.trialRunning || this.failures >= this.settings.failureThreshold) this.openedAt = now;
    this.trialRunning = false;
  }

  /** A call that ended without saying anything of the provider (the caller's own bad request): frees the trial. */
  released(): void {
    this.trialRunning = false;
  }
}
