import { describe, expect, it } from "vitest";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";
import { RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import { MemoryLimitLog } from "../limits/memory-limit-log";

const databases = useTestDatabases();

/** The two engines' logs, and the one in memory (the unpaid quotes'): the same algorithm, the same answers. */
describe.each([...engines, "memory"] as const)("the rate limits' log on %s", (engine) => {
  // In memory, "two instances" share one process's rows.
  const sharedMemory = async () => {
    const limitLog = new MemoryLimitLog();
    return [{ limitLog }, { limitLog }] as const;
  };
  const twoInstances = engine === "memory" ? sharedMemory : useTwoInstances(databases, engine);
  const none = { requestsPerMinute: 0, tokensPerMinute: 0, concurrent: 0 };

  it("admits exactly the requests per minute across instances, and again once the window has moved", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const rule = { ...none, requestsPerMinute: 30 };
    const takes = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        [first, second][index % 2]!.limitLog.take(
          "key:1",
          rule,
          { tokens: 0, leaseUntil: now + 1000 },
          RATE_LIMIT_WINDOW_MS,
          now,
        ),
      ),
    );
    const admitted = takes.filter((taken) => taken.ticket !== undefined);
    expect(admitted).toHaveLength(30);
    const refused = takes.filter((taken) => taken.ticket === undefined);
    expect(refused.every((taken) => taken.use.requests === 30)).toBe(true);
    // A refused call waits for the first request to leave the window (2 s a request at 30 a minute).
    expect(refused.every((taken) => taken.use.waitMs === 2000)).toBe(true);
    expect(admitted.map((taken) => taken.use.requests).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 30 }, (_, index) => index + 1),
    );
    // Another subject has its own; a minute later the first has room again.
    const other = await first.limitLog.take(
      "key:2",
      rule,
      { tokens: 0, leaseUntil: now + 1000 },
      RATE_LIMIT_WINDOW_MS,
      now,
    );
    expect(other.ticket).toBeDefined();
    const later = now + RATE_LIMIT_WINDOW_MS + 1;
    const again = await second.limitLog.take(
      "key:1",
      rule,
      { tokens: 0, leaseUntil: later + 1000 },
      RATE_LIMIT_WINDOW_MS,
      later,
    );
    expect(again).toMatchObject({ use: { requests: 1, requestsResetMs: 0 } });
    expect(again.ticket).toBeDefined();
  });

  it("counts a call's tokens until it ends with what it used, and its running until it ends or the lease lapses", async () => {
    const [first, second] = await twoInstances();
    const now = Date.now();
    const rule = { ...none, tokensPerMinute: 1000, concurrent: 2 };
    const call = (tokens: number, leaseUntil = now + 5000) => ({ tokens, leaseUntil });
    const a = await first.limitLog.take("wallet:0xa", rule, call(600), RATE_LIMIT_WINDOW_MS, now);
    expect(a).toMatchObject({ use: { tokens: 600, running: 1 } });
    // 600 + 500 is over the tokens; once the first call ends having used 100, there is room.
    const over = await second.limitLog.take("wallet:0xa", rule, call(500), RATE_LIMIT_WINDOW_MS, now);
    expect(over.ticket).toBeUndefined();
    // 100 tokens leave the window in 6 s (60 ms a token at 1,000 a minute).
    expect(over.use.waitMs).toBe(6000);
    await first.limitLog.end(a.ticket!, 100);
    const b = await second.limitLog.take("wallet:0xa", rule, call(500), RATE_LIMIT_WINDOW_MS, now);
    expect(b).toMatchObject({ use: { tokens: 600, running: 1 } });
    const c = await second.limitLog.take("wallet:0xa", rule, call(100), RATE_LIMIT_WINDOW_MS, now);
    expect(c.use.running).toBe(2);
    // Two running: a third waits for one to end, or for the lease no running call renewed to lapse.
    expect((await first.limitLog.take("wallet:0xa", rule, call(1), RATE_LIMIT_WINDOW_MS, now)).ticket).toBeUndefined();
    await first.limitLog.end(c.ticket!, 100);
    const d = await first.limitLog.take("wallet:0xa", rule, call(1), RATE_LIMIT_WINDOW_MS, now);
    expect(d.use.running).toBe(2);
    // b's process dies: b and d count until the lease lapses (5 s, nobody renewed it), then a new count starts.
    const afterLease = now + 6000;
    const e = await first.limitLog.take(
      "wallet:0xa",
      rule,
      call(1, afterLease + 5000),
      RATE_LIMIT_WINDOW_MS,
      afterLease,
    );
    expect(e).toMatchObject({ use: { running: 1 } });
    // An end of the lapsed count takes nothing from the new one; a renewed lease keeps e counted.
    await second.limitLog.end(b.ticket!, 500);
    await first.limitLog.renew(e.ticket!, afterLease + 60_000);
    const f = await second.limitLog.take("wallet:0xa", rule, call(1), RATE_LIMIT_WINDOW_MS, afterLease + 10_000);
    expect(f.use.running).toBe(2);
    // A call given back counts nothing: its tokens and its request leave at once.
    const before = f.use.tokens;
    await second.limitLog.give(f.ticket!);
    const g = await second.limitLog.take("wallet:0xa", rule, call(199), RATE_LIMIT_WINDOW_MS, afterLease + 10_000);
    expect(g.use.tokens).toBe(before - 1 + 199);
  });

  it("admits exactly the limit when a minute does not divide by it (7 a minute, 7 tokens a minute)", async () => {
    const [first] = await twoInstances();
    const now = Date.now();
    for (const rule of [
      { ...none, requestsPerMinute: 7 },
      { ...none, tokensPerMinute: 7 },
    ]) {
      const subject = `key:${rule.requestsPerMinute}-${rule.tokensPerMinute}`;
      const takes = [];
      for (let index = 0; index < 9; index++) {
        takes.push(
          await first.limitLog.take(subject, rule, { tokens: 1, leaseUntil: now + 1 }, RATE_LIMIT_WINDOW_MS, now),
        );
      }
      expect(takes.map((taken) => taken.ticket !== undefined)).toEqual([...Array(7).fill(true), false, false]);
    }
  });

  it("names the busiest subjects of this hour and the one before (calls of both), with their refusals", async () => {
    const [first, second] = await twoInstances();
    const hourMs = 3_600_000;
    const hour = Math.floor(Date.now() / hourMs);
    const rule = { ...none, requestsPerMinute: 2 };
    const take = (subject: string, at: number) =>
      [first, second][at % 2]!.limitLog.take(
        subject,
        rule,
        { tokens: 0, leaseUntil: at + 1 },
        RATE_LIMIT_WINDOW_MS,
        at,
      );
    // The hour before: "wallet:0xa" makes 3 calls (one refused); this hour: "key:9" 4 (two refused), "wallet:0xa" 1.
    const before = (hour - 1) * hourMs + 1000;
    for (const at of [before, before + 1, before + 2]) await take("wallet:0xa", at);
    const now = hour * hourMs + 1000;
    for (const at of [now, now + 1, now + 2, now + 3]) await take("key:9", at);
    await take("wallet:0xa", now + 4);
    expect(await first.limitLog.busiest(hour, 10)).toEqual([
      { subject: "wallet:0xa", calls: 1, refusals: 0, previousCalls: 2, previousRefusals: 1 },
      { subject: "key:9", calls: 2, refusals: 2, previousCalls: 0, previousRefusals: 0 },
    ]);
    expect(await second.limitLog.busiest(hour + 2, 10)).toEqual([]);
  });
});
