import { describe, expect, it } from "vitest";
import { CircuitBreaker } from "./circuit-breaker";

describe("a provider's circuit breaker", () => {
  const breaker = () => new CircuitBreaker({ failureThreshold: 3, cooldownMs: 30_000 });

  it("stays closed below the threshold, and a success forgets the failures", () => {
    const subject = breaker();
    subject.failed(0);
    subject.failed(0);
    expect([subject.state(0), subject.consecutiveFailures, subject.tryAcquire(0)]).toEqual(["closed", 2, true]);
    subject.succeeded();
    subject.failed(0);
    subject.failed(0);
    expect([subject.state(0), subject.consecutiveFailures]).toEqual(["closed", 2]);
  });

  it("opens at the threshold and is skipped for the cooldown", () => {
    const subject = breaker();
    for (let failure = 0; failure < 3; failure++) subject.failed(1000);
    expect(subject.state(1000)).toBe("open");
    expect(subject.tryAcquire(30_999)).toBe(false);
  });

  it("lets one trial call through after the cooldown: its success closes, its failure reopens", () => {
    const subject = breaker();
    for (let failure = 0; failure < 3; failure++) subject.failed(0);
    expect(subject.state(30_000)).toBe("half_open");
    expect(subject.tryAcquire(30_000)).toBe(true);
    // Another call while the trial runs is skipped.
    expect(subject.tryAcquire(30_001)).toBe(false);
    subject.failed(30_002);
    expect([subject.state(30_003), subject.tryAcquire(59_000)]).toEqual(["open", false]);
    expect(subject.tryAcquire(60_002)).toBe(true);
    subject.succeeded();
    expect([subject.state(60_003), subject.consecutiveFailures, subject.tryAcquire(60_003)]).toEqual([
      "closed",
      0,
      true,
    ]);
  });

  it("frees the trial of a call that said nothing of the provider (a refused request)", () => {
    const subject = breaker();
    for (let failure = 0; failure < 3; failure++) subject.failed(0);
    expect(subject.tryAcquire(30_000)).toBe(true);
    subject.released();
    expect(subject.tryAcquire(30_001)).toBe(true);
  });
});
