import { describe, expect, it } from "vitest";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";

const databases = useTestDatabases();
const WINDOW_MS = 15 * 60_000;

describe.each(engines)("the operator's store on %s", (engine) => {
  /** Two storages over one new database, as two instances have. */
  const twoInstances = useTwoInstances(databases, engine);

  it("moves the session generation on once per sign-out, seen by every instance", async () => {
    const [first, second] = await twoInstances();
    expect(await first.operator.generation()).toBe(0);
    expect(await second.operator.endSessions()).toBe(1);
    expect(await first.operator.generation()).toBe(1);
    // Sign-outs at once on both instances: none is lost.
    const moved = await Promise.all(
      Array.from({ length: 10 }, (_, index) => [first, second][index % 2]!.operator.endSessions()),
    );
    expect(moved.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await second.operator.generation()).toBe(11);
  });

  it("counts sign-in attempts of one address exactly across instances, per window", async () => {
    const [first, second] = await twoInstances();
    const now = Date.UTC(2026, 10, 28, 12, 0, 0);
    const counts = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        [first, second][index % 2]!.operator.countSignIn("192.0.2.7", now + index, WINDOW_MS),
      ),
    );
    expect(counts.map((count) => count.attempts).sort((a, b) => a - b)).toEqual(
      Array.from({ length: 20 }, (_, index) => index + 1),
    );
    // The window is the first attempt's, whichever instance counted it.
    expect(new Set(counts.map((count) => count.windowStart)).size).toBe(1);
    expect(await first.operator.countSignIn("192.0.2.8", now, WINDOW_MS)).toEqual({ windowStart: now, attempts: 1 });
    // Once the window has ended, an attempt starts a new one.
    const later = counts[0]!.windowStart + WINDOW_MS;
    expect(await second.operator.countSignIn("192.0.2.7", later, WINDOW_MS)).toEqual({
      windowStart: later,
      attempts: 1,
    });
  });
});
