import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { QuoteLimiter } from "./quote-limiter";

const T0 = 1_800_000_000_000;

function refusal(admit: () => void): ApiError {
  try {
    admit();
  } catch (error) {
    return error as ApiError;
  }
  throw new Error("admitted");
}

describe("unpaid quotes per caller", () => {
  it("admits a burst of the limit, then answers 429 with Retry-After and the x-ratelimit headers", () => {
    let refused = 0;
    const limiter = new QuoteLimiter(3, () => refused++);
    for (let index = 0; index < 3; index++) limiter.admit("203.0.113.7", T0 + index * 1000);
    const error = refusal(() => limiter.admit("203.0.113.7", T0 + 10_000));
    expect(error.code).toBe("rate_limit_exceeded");
    expect(error.status).toBe(429);
    // 3 a minute: one each 20 s, the clock 60 s ahead of the first at T0; 10 s in, a quote has room 10 s later.
    expect(error.options.headers).toMatchObject({
      "Retry-After": "10",
      "x-ratelimit-limit-requests": "3",
      "x-ratelimit-remaining-requests": "0",
      "x-ratelimit-reset-requests": "10s",
    });
    expect(error.message).toMatch(/3 price quotes .* per minute; retry in 10 s/);
    expect(refused).toBe(1);
    // Another caller has its own count.
    expect(() => limiter.admit("203.0.113.8", T0 + 10_000)).not.toThrow();
  });

  it("admits one more each minute / limit after the burst, and the whole burst again once quiet for a minute", () => {
    const limiter = new QuoteLimiter(4, () => {});
    for (let index = 0; index < 4; index++) limiter.admit("caller", T0);
    expect(() => limiter.admit("caller", T0 + 14_000)).toThrow(ApiError);
    limiter.admit("caller", T0 + 15_000);
    expect(() => limiter.admit("caller", T0 + 15_000)).toThrow(ApiError);
    for (let index = 0; index < 4; index++) limiter.admit("caller", T0 + 15_000 + 60_000);
    expect(() => limiter.admit("caller", T0 + 75_000)).toThrow(ApiError);
  });

  it("counts nothing when off", () => {
    const limiter = new QuoteLimiter(0, () => {});
    for (let index = 0; index < 10_000; index++) limiter.admit("caller", T0);
  });
});
