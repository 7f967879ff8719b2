import { logEvent } from "../core/log";
import type { LimitLog, LimitTicket } from "./limit-log";

/**
 * The leases of this process's running calls, renewed together: one timer for the process (not one per call), and
 * one renewal per subject and epoch each round however many of its calls run here. A round runs every `everyMs`
 * while a call runs, and the timer stops when none does.
 */
export class LeaseRenewals {
  private readonly running = new Map<string, { ticket: LimitTicket; calls: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly log: LimitLog,
    private readonly everyMs: number,
    private readonly leaseMs: number,
  ) {}

  /** Keeps the ticket's lease renewed until the returned release is called (once). */
  hold(ticket: LimitTicket): () => void {
    const key = `${ticket.epoch}\n${ticket.subject}`;
    const held = this.running.get(key);
    if (held) held.calls++;
    else this.running.set(key, { ticket, calls: 1 });
    this.timer ??= setInterval(() => this.renewAll(), this.everyMs).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const entry = this.running.get(key)!;
      if (--entry.calls === 0) this.running.delete(key);
      if (this.running.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }

  private renewAll(): void {
    const until = Date.now() + this.leaseMs;
    for (const { ticket } of this.running.values()) {
      this.log.renew(ticket, until).catch((error: unknown) => {
        logEvent("error", "rate_limit_renew_failed", { error: (error as Error).message });
      });
    }
  }
}
