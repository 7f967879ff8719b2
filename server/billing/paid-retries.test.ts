import { describe, expect, it } from "vitest";
import { identifierHoldMs } from "./paid-retries";

describe("how long a payment-identifier is held while its request is answered", () => {
  it("is 10 minutes for the defaults, and outlasts every route timing out in turn, then verify and settle", () => {
    expect(identifierHoldMs({ routes: 1, upstreamTimeoutMs: 120_000, facilitatorTimeoutMs: 30_000 })).toBe(600_000);
    expect(identifierHoldMs({ routes: 3, upstreamTimeoutMs: 600_000, facilitatorTimeoutMs: 30_000 })).toBe(
      3 * 600_000 + 2 * 30_000 + 60_000,
    );
  });
});
