import { describe, expect, it } from "vitest";
import { useTestDatabases, useTwoInstances } from "../../cli/dev-stack/test-databases";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import type { ChatModel } from "../../config/catalog/model-catalog";
import { isApiError } from "../core/errors";
import { RateLimiter } from "./rate-limiter";

const databases = useTestDatabases();
const twoInstances = useTwoInstances(databases, "sqlite");

const settings = {
  key: { requestsPerMinute: 600, tokensPerMinute: 0, concurrent: 32 },
  wallet: { requestsPerMinute: 3, tokensPerMinute: 0, concurrent: 0 },
  quotesPerMinute: 0,
};
const luna = defaultCatalog().chat.find((model) => model.id === "vendor-a/gpt-6-luna")!;
/** A model of the catalog with limits of its own: more calls a minute for wallets, a tokens limit for keys. */
const limited: ChatModel = {
  ...luna,
  id: "house/limited",
  rateLimits: { wallet: { requests_per_minute: 5 }, key: { tokens_per_minute: 10_000 } },
};
const wallet = { kind: "wallet" as const, address: "0xwallet" };

async function limiterWithKey(limits: string | null) {
  const [storage] = await twoInstances();
  const limiter = new RateLimiter(storage.limitLog, settings, { limitsOf: async () => limits });
  return limiter;
}

/** Admits `count` calls in turn, ending each: the statuses, 200 for admitted and 429 for refused. */
async function statuses(
  limiter: RateLimiter,
  count: number,
  call: Parameters<RateLimiter["admit"]>[1],
  payer = wallet,
) {
  const seen: number[] = [];
  for (let index = 0; index < count; index++) {
    try {
      const admission = await limiter.admit(payer, call);
      await admission?.end();
      seen.push(200);
    } catch (error) {
      if (!isApiError(error)) throw error;
      seen.push(error.status);
    }
  }
  return seen;
}

describe("the rate limits in force for a call", () => {
  it("are the deployment's, or a model's own, counting a wallet's calls of that model apart", async () => {
    const limiter = await limiterWithKey(null);
    expect(await statuses(limiter, 4, { tokens: 10, model: luna })).toEqual([200, 200, 200, 429]);
    // The model's own wallet limit: five a minute, whatever the wallet did with other models.
    expect(await statuses(limiter, 6, { tokens: 10, model: limited })).toEqual([200, 200, 200, 200, 200, 429]);
    const admission = await limiter.admit({ kind: "key", id: "7" }, { tokens: 100, model: limited });
    expect(admission?.headers).toMatchObject({
      "x-ratelimit-limit-requests": "600",
      "x-ratelimit-limit-tokens": "10000",
    });
    await admission?.end();
  });

  it("are lowered for a key where its buyer asked, never raised", async () => {
    const limiter = await limiterWithKey(JSON.stringify({ requests_per_minute: 2, concurrent: 100 }));
    const key = { kind: "key" as const, id: "8" };
    const first = await limiter.admit(key, { tokens: 10, model: luna });
    expect(first?.headers).toMatchObject({ "x-ratelimit-limit-requests": "2", "x-ratelimit-remaining-requests": "1" });
    expect(limiter.keyRuleWith({ requests_per_minute: 2, concurrent: 100 })).toEqual({
      requestsPerMinute: 2,
      tokensPerMinute: 0,
      concurrent: 32,
    });
    await first?.end();
    expect(await statuses(limiter, 2, { tokens: 10, model: luna }, key as never)).toEqual([200, 429]);
  });

  it("refuses with 429, Retry-After, the headers and what was over, and gives a call never served back", async () => {
    const limiter = await limiterWithKey(null);
    const calls = await Promise.all([1, 2, 3].map(() => limiter.admit(wallet, { tokens: 0 })));
    const refusal = await limiter.admit(wallet, { tokens: 0 }).catch((error: unknown) => error);
    expect(isApiError(refusal) && refusal.code).toBe("rate_limit_exceeded");
    if (!isApiError(refusal)) throw refusal;
    expect(refusal.message).toContain("3 requests per minute");
    expect(refusal.options.headers).toMatchObject({ "Retry-After": expect.stringMatching(/^\d+$/) });
    await calls[0]!.giveBack();
    const again = await limiter.admit(wallet, { tokens: 0 });
    expect(again?.headers["x-ratelimit-remaining-requests"]).toBe("0");
    await Promise.all([again, ...calls.slice(1)].map((call) => call?.end()));
  });
});
