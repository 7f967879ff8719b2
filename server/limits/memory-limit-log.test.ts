import { describe, expect, it } from "vitest";
import { MemoryLimitLog } from "./memory-limit-log";

const rule = { requestsPerMinute: 2, tokensPerMinute: 0, concurrent: 0 };
const T0 = 1_800_000_000_000;
const take = (log: MemoryLimitLog, subject: string, now: number) =>
  log.takeNow(subject, rule, { tokens: 0, leaseUntil: now }, 60_000, now).ticket !== undefined;

describe("the rate limits' rows in memory", () => {
  it("keep at most their number of subjects: beyond, the caught-up ones are dropped and the busy ones kept", () => {
    const log = new MemoryLimitLog(10);
    // Five quiet since T0, five at their limit at T0 + 100 s.
    for (let index = 0; index < 5; index++) take(log, `quiet${index}`, T0);
    for (let index = 0; index < 5; index++) {
      take(log, `busy${index}`, T0 + 100_000);
      take(log, `busy${index}`, T0 + 100_000);
    }
    // A new subject at T0 + 110 s finds the map full: the quiet ones go, the busy ones keep their count.
    expect(take(log, "new", T0 + 110_000)).toBe(true);
    expect(take(log, "busy0", T0 + 110_000)).toBe(false);
  });

  it("drops every subject when a sweep would free less than a tenth, so that no sweep follows each new subject", () => {
    const log = new MemoryLimitLog(10);
    for (let index = 0; index < 10; index++) {
      take(log, `s${index}`, T0);
      take(log, `s${index}`, T0);
    }
    // None has caught up: an eleventh subject clears the map, and the next ones need no sweep.
    expect(take(log, "eleventh", T0 + 1000)).toBe(true);
    expect(take(log, "s0", T0 + 1000)).toBe(true);
    expect(take(log, "s0", T0 + 1000)).toBe(true);
    expect(take(log, "s0", T0 + 1000)).toBe(false);
  });
});
