import { describe, expect, it } from "vitest";
import { useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";
import { isApiError } from "../core/errors";
import { EarlyAdmissions } from "./early-admission";
import { RateLimiter } from "./rate-limiter";

const databases = useTestDatabases();
const twoInstances = useTwoInstances(databases, "sqlite");

/** One call a minute per key: whether a call was counted shows in whether the next one is let in. */
const settings = {
  key: { requestsPerMinute: 1, tokensPerMinute: 0, concurrent: 0 },
  wallet: { requestsPerMinute: 0, tokensPerMinute: 0, concurrent: 0 },
  quotesPerMinute: 0,
};
const call = { tokens: 10 };
const key = (id: string) => ({ kind: "key" as const, id });

async function admissions() {
  const [storage] = await twoInstances();
  const limits = new RateLimiter(storage.limitLog, settings, { limitsOf: async () => null });
  return { limits, early: new EarlyAdmissions(limits) };
}

/** Whether `admitting` was refused for a rate limit (429). */
async function refused(admitting: Promise<unknown>): Promise<boolean> {
  try {
    await admitting;
    return false;
  } catch (error) {
    if (isApiError(error) && error.status === 429) return true;
    throw error;
  }
}

describe("a prepaid call's admission asked with its reservation", () => {
  it("is asked only for a code whose key a reservation has named", async () => {
    const { early } = await admissions();
    expect(early.ask("pk-first", call)).toBeUndefined();
    early.learn("pk-first", key("1"));
    const asked = early.ask("pk-first", call);
    expect(asked).toBeDefined();
    const admission = await early.admitted(asked, key("1"), call);
    expect(admission?.headers["x-ratelimit-limit-requests"]).toBe("1");
    await admission?.end();
    // Counted: the key's one call of the minute is spent, asked early or not.
    expect(await refused(early.admitted(early.ask("pk-first", call), key("1"), call))).toBe(true);
  });

  it("counts nothing for a call whose reservation was refused", async () => {
    const { early, limits } = await admissions();
    early.learn("pk-refused", key("2"));
    await early.giveBack(early.ask("pk-refused", call));
    // The minute's one call is still there.
    const admission = await limits.admit(key("2"), call);
    expect(admission).toBeDefined();
    await admission?.end();
  });

  it("is given back when the reservation names another key, which is admitted instead", async () => {
    const { early, limits } = await admissions();
    early.learn("pk-moved", key("3"));
    const admission = await early.admitted(early.ask("pk-moved", call), key("4"), call);
    expect(admission?.headers["x-ratelimit-remaining-requests"]).toBe("0");
    await admission?.end();
    // Key 3 counts nothing; key 4 counts its one call.
    expect(await refused(limits.admit(key("3"), call))).toBe(false);
    expect(await refused(limits.admit(key("4"), call))).toBe(true);
  });

  it("throws its refusal only once the reservation is known, for the key it names", async () => {
    const { early, limits } = await admissions();
    await (await limits.admit(key("5"), call))?.end();
    early.learn("pk-over", key("5"));
    // Refused early: nothing is thrown until the call's payer is known, then the refusal is the answer.
    const asked = early.ask("pk-over", call);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await refused(early.admitted(asked, key("5"), call))).toBe(true);
    // A refusal for a key the reservation did not name is dropped, and the named key is asked instead.
    expect(await refused(early.admitted(early.ask("pk-over", call), key("6"), call))).toBe(false);
  });
});
