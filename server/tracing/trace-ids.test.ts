import { describe, expect, it } from "vitest";
import { newSpanId, newTraceId, remoteParent } from "./trace-ids";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const SPAN = "00f067aa0ba902b7";

describe("trace and span ids", () => {
  it("are random lower-case hex of W3C's lengths, never zeros only, and do not repeat", () => {
    const traces = new Set(Array.from({ length: 5000 }, newTraceId));
    const spans = new Set(Array.from({ length: 5000 }, newSpanId));
    expect(traces.size).toBe(5000);
    expect(spans.size).toBe(5000);
    for (const id of traces) expect(id).toMatch(/^(?!0+$)[0-9a-f]{32}$/);
    for (const id of spans) expect(id).toMatch(/^(?!0+$)[0-9a-f]{16}$/);
  });
});

describe("a caller's traceparent", () => {
  it("names the caller's span, whether it is sampled, and the tracestate that goes with it", () => {
    expect(remoteParent(`00-${TRACE}-${SPAN}-01`, "vendor=a, other=b")).toEqual({
      traceId: TRACE,
      spanId: SPAN,
      sampled: true,
      traceState: "vendor=a, other=b",
    });
    expect(remoteParent(`00-${TRACE}-${SPAN}-00`, undefined)).toMatchObject({ sampled: false, traceState: undefined });
    // Flags beyond "sampled" are kept to their sampled bit; repeated tracestate headers are one list.
    expect(remoteParent(`00-${TRACE}-${SPAN}-03`, ["a=1", "b=2"])).toMatchObject({
      sampled: true,
      traceState: "a=1,b=2",
    });
  });

  it("of a later version is read for its first four fields", () => {
    expect(remoteParent(`cc-${TRACE}-${SPAN}-01-what-comes-later`, undefined)).toMatchObject({ traceId: TRACE });
  });

  it("is ignored, starting a trace of our own, when it is not valid", () => {
    for (const invalid of [
      undefined,
      ["two", "headers"],
      "",
      `00-${TRACE.toUpperCase()}-${SPAN}-01`,
      `00-${"0".repeat(32)}-${SPAN}-01`,
      `00-${TRACE}-${"0".repeat(16)}-01`,
      `ff-${TRACE}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}-01-extra`,
      `00-${TRACE.slice(1)}-${SPAN}-01`,
      `00-${TRACE}-${SPAN}`,
    ]) {
      expect(remoteParent(invalid, "vendor=a")).toBeUndefined();
    }
  });

  it("passes on no tracestate longer than the 512 characters a vendor is asked to keep", () => {
    expect(remoteParent(`00-${TRACE}-${SPAN}-01`, `a=${"x".repeat(600)}`)).toMatchObject({ traceState: undefined });
  });
});
