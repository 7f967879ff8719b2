import { describe, expect, it } from "vitest";
import { engines, useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";

const databases = useTestDatabases();

describe.each(engines)("the sessions' generations on %s", (engine) => {
  /** Two storages over one new database, as two instances have. */
  const twoInstances = useTwoInstances(databases, engine);

  it("move a subject's generation on once per sign-out, seen by every instance, and no other subject's", async () => {
    const [first, second] = await twoInstances();
    expect(await first.sessions.generation("paysvc_operator:operator")).toBe(0);
    expect(await second.sessions.endSessions("paysvc_operator:operator")).toBe(1);
    expect(await first.sessions.generation("paysvc_operator:operator")).toBe(1);
    // Sign-outs at once on both instances: none is lost.
    const moved = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        [first, second][index % 2]!.sessions.endSessions("paysvc_operator:operator"),
      ),
    );
    expect(moved.sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await second.sessions.generation("paysvc_operator:operator")).toBe(11);
    expect(await second.sessions.generation("paysvc_wallet:0xabc")).toBe(0);
  });
});
