import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { QuoteLimiter } from "./quote-limiter";

const MINUTE = 60_000;
/** The start of a minute, as the limiter's fixed windows begin. */
const T0 = 1_800_000_000_000 - (1_800_000_000_000 % MINUTE);

function refusal(admit: () => void): ApiError {
  try {
    admit();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("admitted");
}

describe("unpaid quotes per caller", () => {
  it("admits the limit in a minute, then answers 429 with Retry-After and the x-ratelimit headers", () => {
    let refused = 0;
    const limiter = new QuoteLimiter(3, () => refused++);
    for (let index = 0; index < 3; index++) limiter.admit("203.0.113.7", T0 + index * 1000);
    const error = refusal(() => limiter.admit("203.0.113.7", T0 + 10_000));
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.status).toBe(429);
    // Over within this minute alone: it fits once the minute turns, 50 s later.
    expect(error.options.headers).toMatchObject({
      "Retry-After": "50",
      "x-ratelimit-limit-requests": "3",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "50s",
    });
    expect(error.message).toMatch(/3 price quotes .* per minute; retry in 50 s/);
    expect(refused).toBe(1);
    // Another caller has its own count.
    expect(() => limiter.admit("203.0.113.8", T0 + 10_000)).not.toThrow();
  });

  it("slides: the last minute's quotes weigh as much of them as is still within 60 s", () => {
    const limiter = new QuoteLimiter(4, () => {});
    for (let index = 0; index < 4; index++) limiter.admit("caller", T0 + 50_000);
    // 15 s into the next minute, three quarters of the four still count (3): one more fits, then none.
    limiter.admit("caller", T0 + MINUTE + 15_000);
    const error = refusal(() => limiter.admit("caller", T0 + MINUTE + 15_000));
    // Room left by this minute: 3 of 4; the weight must fall below 3/4, which it did at 15 s: a second on.
    expect(Number(error.options.headers?.["Retry-After"])).toBeGreaterThanOrEqual(1);
    expect(Number(error.options.headers?.["Retry-After"])).toBeLessThanOrEqual(15);
    // Half-way through, two of the last minute's four count, and this minute's one: one more fits.
    limiter.admit("caller", T0 + MINUTE + 30_000);
    expect(() => limiter.admit("caller", T0 + MINUTE + 30_000)).toThrow(ApiError);
    // Two minutes later nothing of them counts.
    for (let index = 0; index < 4; index++) limiter.admit("caller", T0 + 3 * MINUTE + 1);
  });

  it("counts nothing when off", () => {
    const limiter = new QuoteLimiter(0, () => {});
    for (let index = 0; index < 10_000; index++) limiter.admit("caller", T0);
  });
});
