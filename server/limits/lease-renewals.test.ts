import { describe, expect, it } from "vitest";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";
import { RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import { LeaseRenewals } from "./lease-renewals";

const databases = useTestDatabases();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(engines)("the leases of running calls on %s", (engine) => {
  const twoInstances = useTwoInstances(databases, engine);

  it("are renewed while a call holds one, and lapse once none does: the count then starts again", async () => {
    const [first, second] = await twoInstances();
    const rule = { requestsPerMinute: 0, tokensPerMinute: 0, concurrent: 2 };
    const take = (leaseMs: number) => {
      const now = Date.now();
      return first.limitLog.take("key:7", rule, { tokens: 0, leaseUntil: now + leaseMs }, RATE_LIMIT_WINDOW_MS, now);
    };
    // Renewed every 50 ms for 2 s; let in for 500 ms: room enough for a busy machine's late timers.
    const renewals = new LeaseRenewals(second.limitLog, 50, 2000);
    const [a, b] = [await take(500), await take(500)];
    const releases = [renewals.hold(a.ticket!), renewals.hold(b.ticket!)];
    // Past the leases they were let in with: renewed, both still count, so a third waits.
    await pause(1000);
    expect((await take(500)).ticket).toBeUndefined();
    // Held no more (their process died, say): the lease lapses 2 s after its last renewal, and a new count starts.
    for (const release of releases) release();
    await pause(2600);
    const c = await take(500);
    expect(c.ticket).toBeDefined();
    expect(c.use.running).toBe(1);
  });
});
