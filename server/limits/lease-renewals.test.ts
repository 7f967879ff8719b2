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
    const renewals = new LeaseRenewals(second.limitLog, 20, 400);
    const [a, b] = [await take(50), await take(50)];
    const releases = [renewals.hold(a.ticket!), renewals.hold(b.ticket!)];
    // Past the leases they were let in with: renewed, both still count, so a third waits.
    await pause(150);
    expect((await take(50)).ticket).toBeUndefined();
    // Held no more (their process died, say): the lease lapses 400 ms after its last renewal, and a new count starts.
    for (const release of releases) release();
    await pause(600);
    const c = await take(50);
    expect(c.ticket).toBeDefined();
    expect(c.use.running).toBe(1);
  });
});
