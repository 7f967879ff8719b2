import { wrapFetchWithPayment } from "@x402/fetch";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { balanceOf, chatBody, payingClient, quoteOf } from "./support/network-stack";
import { startPostgresStack } from "./support/postgres-stack";
import { waitFor } from "../cli/dev-stack/wait-for";

const NETWORK = "eip155:5042";
const USDC = "0x3600000000000000000000000000000000000000" as const;
const TOKENS_PER_MINUTE = 20_000;
const OPERATOR_TOKEN = "rate-limits-operator-token-0123456789abcdef";
const METRICS_TOKEN = "rate-limits-metrics-token";

/**
 * Rate limits on two app instances over one real PostgreSQL server: a key limited to 30 requests a minute, and a
 * wallet too, are let through exactly 30 times whichever instance each call reaches, the rest answered 429 before
 * any work and charged nothing; tokens per minute count each call's reservation.
 */
describe("rate limits over two instances on one PostgreSQL", () => {
  let started: Awaited<ReturnType<typeof startPostgresStack>>;
  let urls: string[];
  /** The longest Retry-After a refusal named: after it, the limited payers are served again. */
  let retryAfter = 0;
  let refusedAt = 0;
  /** How many of the wallet's 60 paid calls were served (the busiest payers' figures follow from it). */
  let walletServed = 0;
  beforeAll(async () => {
    started = await startPostgresStack(NETWORK, {
      instances: 2,
      appEnv: {
        RATE_LIMIT_KEY_RPM: "30",
        RATE_LIMIT_KEY_TPM: String(TOKENS_PER_MINUTE),
        RATE_LIMIT_KEY_CONCURRENT: "0",
        RATE_LIMIT_WALLET_RPM: "30",
        RATE_LIMIT_WALLET_CONCURRENT: "0",
        OPERATOR_TOKEN,
        METRICS_TOKEN,
        // Sixty calls at once on a busy machine may wait seconds for the local upstream: none is to fail for it.
        UPSTREAM_TIMEOUT_MS: "60000",
      },
    });
    urls = started.stack.instances.map((instance) => instance.url);
  });
  afterAll(async () => {
    await started?.remove();
  });

  const payer = (index: number) => started.stack.payers[index]!;
  const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body),
    });
  async function buyKey(tokens: number, payerIndex: number, limits?: Record<string, unknown>): Promise<string> {
    const pay = wrapFetchWithPayment(fetch, payingClient(started.stack, payer(payerIndex).privateKey, USDC, NETWORK));
    const response = await pay(`${urls[0]}/prepaid/codes`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens, limits }),
    });
    expect(response.status).toBe(201);
    return ((await response.json()) as { code: string }).code;
  }
  const keyStatus = async (code: string) =>
    (await (await fetch(`${urls[1]}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } })).json()) as {
      limits: Record<string, number | null>;
    };
  const usedTokens = async (code: string) =>
    (
      (await (
        await fetch(`${urls[1]}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } })
      ).json()) as {
        tokens: { used: number; reserved: number };
      }
    ).tokens;

  /** What one call came to: its status, headers, and the tokens its usage states. */
  async function outcome(response: Response) {
    const body = (await response.json()) as {
      usage?: { total_tokens: number };
      error?: { code: string; message: string };
    };
    return { status: response.status, headers: response.headers, tokens: body.usage?.total_tokens ?? 0, body };
  }

  /** How many calls ended with each status and error (its message when unexpected): a failure shows every outcome. */
  const tally = (outcomes: Awaited<ReturnType<typeof outcome>>[]) =>
    outcomes.reduce<Record<string, number>>((counts, { status, body }) => {
      const expected = status === 200 || status === 429;
      const key = [status, body.error?.code, expected ? undefined : body.error?.message].filter(Boolean).join(" ");
      counts[key] = (counts[key] ?? 0) + 1;
      return counts;
    }, {});

  function expectRefusals(outcomes: Awaited<ReturnType<typeof outcome>>[], limit: string, callTokens = 0) {
    for (const refused of outcomes.filter((each) => each.status === 429)) {
      expect(refused.body.error?.code).toBe("rate_limit_exceeded");
      const seconds = Number(refused.headers.get("retry-after"));
      expect(seconds).toBeGreaterThanOrEqual(1);
      expect(seconds).toBeLessThanOrEqual(60);
      expect(refused.headers.get(`x-ratelimit-limit-${limit}`)).not.toBeNull();
      // Less left than the call counts: none of the requests, too few of the tokens.
      const remaining = Number(refused.headers.get(`x-ratelimit-remaining-${limit}`));
      expect(remaining).toBeLessThan(limit === "requests" ? 1 : callTokens);
      expect(refused.headers.get(`x-ratelimit-reset-${limit}`)).toMatch(/^\d+s$/);
      retryAfter = Math.max(retryAfter, seconds);
    }
    refusedAt = Date.now();
  }

  it("serves a key limited to 30 requests a minute a burst of 30 of 60 calls at once, and charges it for those", async () => {
    const code = await buyKey(100_000, 1);
    const startedAt = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        post(`${urls[index % 2]}/v1/chat/completions`, chatBody(`key call ${index}`), {
          authorization: `Bearer ${code}`,
        }).then(outcome),
      ),
    );
    const served = outcomes.filter((each) => each.status === 200);
    // The burst, and one more for each 2 s the 60 took (a cell rate of 30 a minute): 30 on an idle machine.
    expect(served.length).toBeGreaterThanOrEqual(30);
    expect(served.length).toBeLessThanOrEqual(30 + Math.floor((Date.now() - startedAt) / 2000));
    expect(tally(outcomes)).toEqual({ "200": served.length, "429 rate_limit_exceeded": 60 - served.length });
    expectRefusals(outcomes, "requests");
    for (const each of served) expect(each.headers.get("x-ratelimit-limit-requests")).toBe("30");
    const charged = served.reduce((sum, each) => sum + each.tokens, 0);
    expect(await usedTokens(code)).toMatchObject({ used: charged, reserved: 0 });
    // The official SDK reads the refusal as its RateLimitError, with the headers.
    // (Five at once: should a call come a share of the minute after the last, one of them has room.)
    const sdk = new OpenAI({ apiKey: code, baseURL: `${urls[0]}/v1`, maxRetries: 0 });
    const tries = await Promise.all(
      Array.from({ length: 5 }, () =>
        sdk.chat.completions.create(chatBody("one more") as never).catch((thrown: unknown) => thrown),
      ),
    );
    const error = tries.find((each) => each instanceof OpenAI.RateLimitError);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect((error as InstanceType<typeof OpenAI.RateLimitError>).headers.get("x-ratelimit-remaining-requests")).toBe(
      "0",
    );
  });

  it("serves a wallet paying with exact, limited to 30 requests a minute, the burst of 60 it lets in, and takes those payments", async () => {
    const body = chatBody("wallet call");
    const price = BigInt((await quoteOf(started.stack, "/v1/chat/completions", body)).accepts[0]!.amount);
    const pay = wrapFetchWithPayment(fetch, payingClient(started.stack, payer(2).privateKey, USDC, NETWORK));
    const before = await balanceOf(started.stack, USDC, payer(2).address);
    const startedAt = Date.now();
    const outcomes = await Promise.all(
      Array.from({ length: 60 }, (_, index) =>
        pay(`${urls[index % 2]}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        }).then(outcome),
      ),
    );
    const spentMs = Date.now() - startedAt;
    // A burst of 30, then one more each 2 s (a cell rate of 30 a minute): paid calls take a 402 and a payment each,
    // so on a busy machine the 60 spread over seconds, and a call that comes 2 s after the burst has room.
    const counts = tally(outcomes);
    walletServed = counts["200"] ?? 0;
    expect(walletServed).toBeGreaterThanOrEqual(30);
    expect(walletServed).toBeLessThanOrEqual(30 + Math.floor(spentMs / 2000));
    expect(counts).toEqual({ "200": walletServed, "429 rate_limit_exceeded": 60 - walletServed });
    expectRefusals(outcomes, "requests");
    expect(before - (await balanceOf(started.stack, USDC, payer(2).address))).toBe(price * BigInt(walletServed));
    const statuses = () =>
      started.query<{ status: string; n: string }>(
        "select status, count(*)::text as n from payments where payer = $1 and resource like '%/v1/chat/completions' group by status order by status",
        [payer(2).address.toLowerCase()],
      );
    // A payment's record follows its answer (written after the bytes went out): on a busy machine the last answers
    // arrive before their rows say settled.
    await waitFor(async () => (await statuses()).every((row) => row.status !== "verified"), {
      timeoutMs: 10_000,
      what: "every answered payment's ledger row to be final",
    });
    expect(await statuses()).toEqual([
      { status: "not_charged", n: String(60 - walletServed) },
      { status: "settled", n: String(walletServed) },
    ]);
  });

  it("counts each call's input and output cap against a key's tokens per minute: no more are let in", async () => {
    const code = await buyKey(100_000, 3);
    const body = (index: number) => ({
      ...chatBody(`[paysvc-dev-long] tokens call ${index}`),
      max_tokens: 2000,
    });
    const { input_tokens: input } = (await quoteOf(started.stack, "/v1/chat/completions", body(0))).extensions
      ?.quote as { input_tokens: number };
    const outcomes = await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        post(`${urls[index % 2]}/v1/chat/completions`, body(index), { authorization: `Bearer ${code}` }).then(outcome),
      ),
    );
    // Each runs to its cap, so what it counts on ending is what it reserved: exactly this many fit in the minute.
    const fit = Math.floor(TOKENS_PER_MINUTE / (input + 2000));
    expect(outcomes.filter((each) => each.status === 200)).toHaveLength(fit);
    expectRefusals(outcomes, "tokens", input + 2000);
    expect(await usedTokens(code)).toMatchObject({ used: fit * (input + 2000), reserved: 0 });
  });

  it("keeps the lower limits a key's buyer asked for, shows them, and refuses limits it cannot read", async () => {
    const code = await buyKey(100_000, 5, { requests_per_minute: 5, concurrent: 2 });
    expect((await keyStatus(code)).limits).toEqual({
      requests_per_minute: 5,
      tokens_per_minute: TOKENS_PER_MINUTE,
      concurrent: 2,
    });
    const statuses: number[] = [];
    for (let index = 0; index < 6; index++) {
      const response = await post(`${urls[index % 2]}/v1/chat/completions`, chatBody(`own limit ${index}`), {
        authorization: `Bearer ${code}`,
      });
      await response.text();
      statuses.push(response.status);
      if (response.status === 200) expect(response.headers.get("x-ratelimit-limit-requests")).toBe("5");
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    // The refused call was admitted with its reservation (each instance knew the key by then): its reservation was
    // released, nothing charged for it.
    expect((await usedTokens(code)).reserved).toBe(0);
    // Limits that are not positive integers, or that it does not know, are refused before any payment.
    for (const limits of [{ requests_per_minute: 0 }, { concurrent: "2" }, { per_day: 5 }]) {
      const response = await post(`${urls[0]}/prepaid/codes`, {
        model: "vendor-a/gpt-6-luna",
        tokens: 100_000,
        limits,
      });
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { param: string } }).error.param).toMatch(/^limits/);
    }
  });

  it("serves the limited key and wallet again once the window has moved", { timeout: 90_000 }, async () => {
    const code = await buyKey(100_000, 4);
    // Retry-After says when one more call has room (a call's share of the minute after the burst): the whole limit
    // is there again once the burst's minute has passed.
    expect(refusedAt + retryAfter * 1000 - Date.now()).toBeLessThanOrEqual(60_000);
    const waitMs = refusedAt + 60_000 - Date.now();
    // A fresh key is limited apart from the one refused above.
    expect(
      (await post(`${urls[0]}/v1/chat/completions`, chatBody("fresh"), { authorization: `Bearer ${code}` })).status,
    ).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, waitMs) + 500));
    const pay = wrapFetchWithPayment(fetch, payingClient(started.stack, payer(2).privateKey, USDC, NETWORK));
    const paid = await pay(`${urls[1]}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(chatBody("after the reset")),
    });
    expect(paid.status).toBe(200);
    expect(paid.headers.get("x-ratelimit-remaining-requests")).toBe("29");
  });

  it("names the busiest keys and wallets on the operator's page, with their refusals", async () => {
    const signIn = await fetch(`${urls[1]}/operator/session`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: urls[1]! },
      body: new URLSearchParams({ token: OPERATOR_TOKEN }),
    });
    expect(signIn.status).toBe(303);
    const cookie = signIn.headers.get("set-cookie")!.split(";")[0]!;
    const page = await (await fetch(`${urls[1]}/operator`, { headers: { cookie } })).text();
    expect(page).toContain("Busiest keys and wallets");
    const table = page.slice(page.indexOf('data-testid="busiest"'));
    const rowOf = (who: string) => {
      const start = table.indexOf(who);
      expect(start).toBeGreaterThan(-1);
      return table.slice(start, table.indexOf("</tr>", start));
    };
    // The wallet of the second test: its calls served there and one after the reset, this hour or the one before.
    const wallet = payer(2).address.toLowerCase();
    const figures = [
      ...rowOf(`${wallet.slice(0, 8)}…${wallet.slice(-6)}`).matchAll(/<td class="num"[^>]*>(\d+)</g),
    ].map((match) => Number(match[1]));
    expect(figures[0]! + figures[2]!).toBe(walletServed + 1);
    expect(figures[1]! + figures[3]!).toBe(60 - walletServed);
    expect(table).toContain("key #");
    // Each instance counts the refusals it answered, per payer and limit.
    const refusals = await Promise.all(
      urls.map(async (url) => {
        const text = await (
          await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
        ).text();
        const line = text
          .split("\n")
          .find(
            (each) =>
              each.startsWith("paysvc_rate_limit_refusals_total{") &&
              each.includes('payer="wallet"') &&
              each.includes('limit="requests"'),
          );
        return Number(line?.split(" ").pop() ?? 0);
      }),
    );
    expect(refusals[0]! + refusals[1]!).toBe(60 - walletServed);
  });
});
