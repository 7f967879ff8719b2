import { describe, expect, it } from "vitest";
import { phase, type Timings } from "./phase";

describe("a phase of a call", () => {
  it("answers work that answers at once at once, timed", () => {
    const timings: Timings = {};
    const answer = phase(timings, "quote", () => 42);
    expect(answer).toBe(42);
    expect(timings.quote).toBeGreaterThanOrEqual(0);
  });

  it("times work that waits until it settles, failed or not, and passes its failure on", async () => {
    const timings: Timings = {};
    const waited = await phase(timings, "verify", async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return "valid";
    });
    expect(waited).toBe("valid");
    expect(timings.verify).toBeGreaterThanOrEqual(15);
    const failing = phase(timings, "settle", async () => {
      await new Promise((resolve) => setTimeout(resolve, 10));
      throw new Error("facilitator away");
    });
    await expect(failing).rejects.toThrow("facilitator away");
    expect(timings.settle).toBeGreaterThanOrEqual(5);
    expect(() =>
      phase(timings, "reserve", () => {
        throw new Error("at once");
      }),
    ).toThrow("at once");
    expect(timings.reserve).toBeGreaterThanOrEqual(0);
  });
});
