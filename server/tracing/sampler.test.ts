import { describe, expect, it } from "vitest";
import { samplerOf } from "./sampler";
import { newSpanId, newTraceId } from "./trace-ids";

const parent = (sampled: boolean) => ({ traceId: newTraceId(), spanId: newSpanId(), sampled, traceState: undefined });
const share = (sample: (traceId: string) => boolean, n = 20_000) =>
  Array.from({ length: n }, newTraceId).filter(sample).length / n;

describe("the sampler OTEL_TRACES_SAMPLER names", () => {
  it("always_on and always_off decide every span, whatever its parent", () => {
    const on = samplerOf({ kind: "always_on", ratio: 1 });
    const off = samplerOf({ kind: "always_off", ratio: 1 });
    expect([on(newTraceId(), undefined), on(newTraceId(), parent(false))]).toEqual([true, true]);
    expect([off(newTraceId(), undefined), off(newTraceId(), parent(true))]).toEqual([false, false]);
  });

  it("traceidratio keeps about its ratio of traces, and gives every span of a trace the same answer", () => {
    const quarter = samplerOf({ kind: "traceidratio", ratio: 0.25 });
    expect(share((id) => quarter(id, undefined))).toBeGreaterThan(0.23);
    expect(share((id) => quarter(id, undefined))).toBeLessThan(0.27);
    const traceId = newTraceId();
    const first = quarter(traceId, undefined);
    for (let i = 0; i < 20; i++) expect(quarter(traceId, parent(!first))).toBe(first);
    expect(share((id) => samplerOf({ kind: "traceidratio", ratio: 0 })(id, undefined))).toBe(0);
    expect(share((id) => samplerOf({ kind: "traceidratio", ratio: 1 })(id, undefined))).toBe(1);
  });

  it("a parentbased one follows its parent, and asks its root rule only for a trace that starts here", () => {
    const sampler = samplerOf({ kind: "parentbased_always_off", ratio: 1 });
    expect(sampler(newTraceId(), parent(true))).toBe(true);
    expect(sampler(newTraceId(), undefined)).toBe(false);
    const byDefault = samplerOf({ kind: "parentbased_always_on", ratio: 1 });
    expect(byDefault(newTraceId(), parent(false))).toBe(false);
    expect(byDefault(newTraceId(), undefined)).toBe(true);
    const ratio = samplerOf({ kind: "parentbased_traceidratio", ratio: 0.5 });
    expect(share((id) => ratio(id, undefined))).toBeGreaterThan(0.47);
    expect(share((id) => ratio(id, parent(true)))).toBe(1);
  });
});
