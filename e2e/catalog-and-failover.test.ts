import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { freePort } from "../cli/dev-stack/next-app";
import type { ProviderOutage } from "../cli/dev-stack/dev-faults";
import { decimalToAtomic, divideRoundingUp } from "../server/core/money";
import { startExtraApp } from "./support/extra-app";
import {
  balances,
  chatBody,
  ledgerRow,
  officialPayment,
  payingOpenAI,
  postJson,
  quote,
  stack,
} from "./support/payments";

const directory = mkdtempSync(join(tmpdir(), "paysvc-catalog-e2e-"));
const luna = "vendor-a/gpt-6-luna";
const tiny = "acme/tiny-1";
/** A name a coding agent sends, mapped by the catalog to the sold model. */
const tinyAlias = "claude-tiny-4-5";
let primary: LocalUpstream;
let backup: LocalUpstream;

/**
 * The operator's catalog: luna served by two development providers in turn, each under an id of its own, and a new
 * model with prices of its own whose first route is a provider that is not there (connection refused).
 */
async function writeCatalog(): Promise<string> {
  const closedPort = await freePort();
  const path = join(directory, "catalog.json");
  writeFileSync(
    path,
    JSON.stringify({
      extends: "default",
      models: [
        {
          id: luna,
          kind: "chat",
          prices: { input_per_1m: "0.07", output_per_1m: "0.35" },
          routes: [
            { provider: "primary", base_url: `${primary.url}/v1`, model: "luna-primary-2026" },
            {
              provider: "backup",
              base_url: `${backup.url}/v1`,
              api_key_env: "BACKUP_API_KEY",
              model: "luna-backup-2026",
              headers: { "x-organization": "paysvc-e2e" },
            },
          ],
        },
        {
          id: tiny,
          kind: "chat",
          prices: { input_per_1m: "0.123456", output_per_1m: "1.5" },
          limits: { context_tokens: 32_000, max_output_tokens: 1000 },
          aliases: [tinyAlias],
          routes: [
            { provider: "gone", base_url: `http://127.0.0.1:${closedPort}/v1`, model: "tiny" },
            { provider: "backup", base_url: `${backup.url}/v1`, api_key_env: "BACKUP_API_KEY", model: "tiny-2" },
          ],
        },
      ],
    }),
  );
  return path;
}

let app: Awaited<ReturnType<typeof startExtraApp>>;
let breakerApp: Awaited<ReturnType<typeof startExtraApp>>;
const payer = () => stack().payers[4]!;
const METRICS_TOKEN = "catalog-e2e-metrics-token";

beforeAll(async () => {
  primary = await startLocalUpstream({ port: 0 });
  backup = await startLocalUpstream({ port: 0 });
  const catalog = await writeCatalog();
  const env = { PAYSVC_CATALOG: catalog, BACKUP_API_KEY: "backup-secret", UPSTREAM_TIMEOUT_MS: "1500" };
  // The failover cases keep the breaker out of the way; the breaker's own app skips a provider after 2 failures.
  app = await startExtraApp({ ...env, PROVIDER_FAILURE_THRESHOLD: "1000", METRICS_TOKEN });
  breakerApp = await startExtraApp({ ...env, PROVIDER_FAILURE_THRESHOLD: "2", PROVIDER_COOLDOWN_SECONDS: "2" });
});

afterAll(async () => {
  await app?.stop();
  await breakerApp?.stop();
  await primary?.stop();
  await backup?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** A chat completion paid with the official client; what the payer paid, and who served it. */
async function paidChat(url: string, body: Record<string, unknown>) {
  const quoted = BigInt((await quote("/v1/chat/completions", body, url)).accepts[0]!.amount);
  const before = await balances(payer().address);
  const { data, response } = await payingOpenAI(payer().privateKey, `${url}/v1`)
    .chat.completions.create(body as never)
    .withResponse();
  const paid = before.payer - (await balances(payer().address)).payer;
  return { data, provider: response.headers.get("x-paysvc-provider"), quoted, paid };
}

describe("a catalog that maps a sold model to its providers' own ids", () => {
  it("sends each provider its own id and answers with the sold id, whole and streamed", async () => {
    primary.setOutage(undefined);
    const served = await paidChat(app.url, chatBody("which model are you?"));
    expect(served.provider).toBe("primary");
    expect(served.data.model).toBe(luna);
    expect(primary.chatRequestsReceived.at(-1)?.model).toBe("luna-primary-2026");
    // A route without a key variable sends no key (the caller's own Authorization never reaches a provider).
    expect(primary.chatRequestsReceived.at(-1)?.headers.authorization).toBeUndefined();
    expect(served.paid).toBe(served.quoted);

    const stream = await payingOpenAI(payer().privateKey, `${app.url}/v1`).chat.completions.create({
      ...chatBody("stream me"),
      stream: true,
    } as never);
    const models = new Set<string>();
    for await (const chunk of stream as unknown as AsyncIterable<{ model: string }>) models.add(chunk.model);
    expect([...models]).toEqual([luna]);
    expect(primary.chatRequestsReceived.at(-1)?.model).toBe("luna-primary-2026");
  });
});

describe("a model named by an alias", () => {
  it("is listed with its aliases, quoted and served as the model it names", async () => {
    const listed = ((await (await fetch(`${app.url}/v1/models`)).json()) as { data: Record<string, unknown>[] }).data;
    expect(listed.find((entry) => entry.id === tiny)?.aliases).toEqual([tinyAlias]);
    expect(listed.find((entry) => entry.id === luna)?.aliases).toEqual([]);

    const body = { messages: [{ role: "user", content: "who sells you?" }], max_tokens: 50 };
    const byAlias = await quote("/v1/chat/completions", { ...body, model: tinyAlias }, app.url);
    const byId = await quote("/v1/chat/completions", { ...body, model: tiny }, app.url);
    expect(byAlias.accepts[0]!.amount).toBe(byId.accepts[0]!.amount);
    const served = await paidChat(app.url, { ...body, model: tinyAlias });
    expect(served.provider).toBe("backup");
    expect(served.data.model).toBe(tiny);
    expect(backup.chatRequestsReceived.at(-1)?.model).toBe("tiny-2");
    expect(served.paid).toBe(served.quoted);
  });

  it("is no name for another model: an unknown one is 400 model_not_found", async () => {
    const response = await postJson(
      "/v1/chat/completions",
      { model: "claude-unknown-9", messages: [{ role: "user", content: "x" }] },
      {},
      app.url,
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe("model_not_found");
  });
});

describe("failover between two development providers", () => {
  const outages: ProviderOutage[] = ["http-error", "rate-limited", "hang", "error-in-200"];
  for (const outage of outages) {
    it(`serves from the second route when the first answers ${outage}, charged once, exactly the quote`, async () => {
      primary.setOutage(outage);
      const asked = primary.chatRequestsReceived.length;
      try {
        const served = await paidChat(app.url, chatBody(`failover after ${outage}`));
        expect(served.provider).toBe("backup");
        expect(served.data.model).toBe(luna);
        expect(backup.chatRequestsReceived.at(-1)).toMatchObject({
          model: "luna-backup-2026",
          headers: { authorization: "Bearer backup-secret", "x-organization": "paysvc-e2e" },
        });
        expect(primary.chatRequestsReceived.length).toBe(asked + 1);
        expect(served.paid).toBe(served.quoted);
      } finally {
        primary.setOutage(undefined);
      }
    });
  }

  it("serves from the second route when the first refuses the connection", async () => {
    const served = await paidChat(app.url, { ...chatBody("nobody at the first address"), model: tiny });
    expect(served.provider).toBe("backup");
    expect(served.data.model).toBe(tiny);
    expect(backup.chatRequestsReceived.at(-1)?.model).toBe("tiny-2");
    expect(served.paid).toBe(served.quoted);
  });

  it("fails a stream over when its first route fails before its first event", async () => {
    primary.setOutage("error-in-200");
    try {
      const body = { ...chatBody("stream after a failure"), stream: true };
      const paymentRequired = await quote("/v1/chat/completions", body, app.url);
      const signature = await officialPayment(payer().privateKey, paymentRequired);
      const before = await balances(payer().address);
      const response = await postJson("/v1/chat/completions", body, { "PAYMENT-SIGNATURE": signature }, app.url);
      expect(response.status).toBe(200);
      expect(response.headers.get("x-paysvc-provider")).toBe("backup");
      const text = await response.text();
      expect(text).toMatch(/data: \[DONE\]\n\n$/);
      expect(text).not.toMatch(/error/);
      expect(backup.chatRequestsReceived.at(-1)?.model).toBe("luna-backup-2026");
      expect(before.payer - (await balances(payer().address)).payer).toBe(BigInt(paymentRequired.accepts[0]!.amount));
    } finally {
      primary.setOutage(undefined);
    }
  });

  it("answers 502 and charges nothing when every route fails", async () => {
    primary.setOutage("http-error");
    backup.setOutage("rate-limited");
    try {
      const body = chatBody("nobody can answer");
      const paymentRequired = await quote("/v1/chat/completions", body, app.url);
      const signature = await officialPayment(payer().privateKey, paymentRequired);
      const before = await balances(payer().address);
      const response = await postJson("/v1/chat/completions", body, { "PAYMENT-SIGNATURE": signature }, app.url);
      expect(response.status).toBe(502);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe("upstream_error");
      expect(await balances(payer().address)).toEqual(before);
      expect(ledgerRow(signature)?.status).toBe("not_charged");
    } finally {
      primary.setOutage(undefined);
      backup.setOutage(undefined);
    }
  });
});

describe("the provider metrics", () => {
  it("count each provider's calls by outcome, and their latency", async () => {
    const response = await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    const text = await response.text();
    const sample = (name: string, labels: string[]) =>
      text
        .split("\n")
        .filter((line) => line.startsWith(`${name}{`) && labels.every((label) => line.includes(label)))
        .map((line) => Number(line.split(" ").at(-1)));
    // The failover cases above: every outage of the primary was a failed call, and the backup served them.
    expect(
      sample("paysvc_provider_requests_total", ['provider="primary"', 'outcome="failed"'])[0],
    ).toBeGreaterThanOrEqual(6);
    expect(sample("paysvc_provider_requests_total", ['provider="backup"', 'outcome="ok"'])[0]).toBeGreaterThanOrEqual(
      6,
    );
    // The refused connection's case, and the alias's call (tiny's first route is the one not there).
    expect(sample("paysvc_provider_requests_total", ['provider="gone"', 'outcome="failed"'])[0]).toBe(2);
    expect(sample("paysvc_provider_latency_seconds_count", ['provider="primary"'])[0]).toBeGreaterThanOrEqual(8);
  });
});

describe("/health with a provider down", () => {
  it("answers 200 degraded while every model has a provider up, naming the one down", async () => {
    const response = await fetch(`${app.url}/health`);
    const health = (await response.json()) as {
      status: string;
      down: string[];
      checks: { upstream: { status: string }; providers: Record<string, { status: string }> };
    };
    // "gone" refuses connections, but acme/tiny-1 fails over to "backup".
    expect(health.checks.providers.gone?.status).toBe("down");
    expect(health.checks.providers.backup?.status).toBe("up");
    expect(health.checks.upstream.status).toBe("up");
    expect(response.status).toBe(200);
    expect(health.status).toBe("degraded");
    expect(health.down).toEqual(["provider gone"]);
  });
});

describe("the circuit breaker", () => {
  type Health = { checks: { providers: Record<string, { breaker: string; consecutive_failures: number }> } };
  const health = async () => (await (await fetch(`${breakerApp.url}/health`)).json()) as Health;

  it("skips a provider that keeps failing, shows it in /health, and tries it again after the cooldown", async () => {
    primary.setOutage("http-error");
    try {
      for (const attempt of [1, 2]) {
        const asked = primary.chatRequestsReceived.length;
        expect((await paidChat(breakerApp.url, chatBody(`breaker ${attempt}`))).provider).toBe("backup");
        expect(primary.chatRequestsReceived.length).toBe(asked + 1);
      }
      expect((await health()).checks.providers.primary).toMatchObject({ breaker: "open", consecutive_failures: 2 });
      const asked = primary.chatRequestsReceived.length;
      expect((await paidChat(breakerApp.url, chatBody("breaker open"))).provider).toBe("backup");
      expect(primary.chatRequestsReceived.length).toBe(asked);
    } finally {
      primary.setOutage(undefined);
    }
    await new Promise((resolve) => setTimeout(resolve, 2100));
    expect((await health()).checks.providers.primary?.breaker).toBe("half_open");
    const asked = primary.chatRequestsReceived.length;
    expect((await paidChat(breakerApp.url, chatBody("breaker trial"))).provider).toBe("primary");
    expect(primary.chatRequestsReceived.length).toBe(asked + 1);
    expect((await health()).checks.providers.primary).toMatchObject({ breaker: "closed", consecutive_failures: 0 });
  });
});

describe("a catalog with a new model and prices of its own", () => {
  /** USD per token as /v1/models writes it -> atomic units x 10^12 per token, exactly. */
  const perTokenScaled = (usd: string) => decimalToAtomic(usd, 18);

  it("quotes, lists, documents and shows the same prices, to the atomic unit", async () => {
    const body = { model: tiny, messages: [{ role: "user", content: "price me exactly" }], max_tokens: 777 };
    const paymentRequired = await quote("/v1/chat/completions", body, app.url);
    const display = paymentRequired.extensions?.quote as { input_tokens: number; max_output_tokens: number };
    const listed = ((await (await fetch(`${app.url}/v1/models`)).json()) as { data: Record<string, unknown>[] }).data;
    const model = listed.find((entry) => entry.id === tiny) as {
      context_length: number;
      max_output_tokens: number;
      pricing: {
        input_per_1m_tokens: string;
        output_per_1m_tokens: string;
        input_per_token: string;
        output_per_token: string;
      };
    };
    expect(model).toMatchObject({
      context_length: 32_000,
      max_output_tokens: 1000,
      pricing: { input_per_1m_tokens: "0.123456", output_per_1m_tokens: "1.5" },
    });
    // From the listed per-token prices: tokens x price, in 10^-18 USD, rounded up once to 10^-6, + 0.001 overhead.
    const scaled =
      BigInt(display.input_tokens) * perTokenScaled(model.pricing.input_per_token) +
      BigInt(display.max_output_tokens) * perTokenScaled(model.pricing.output_per_token);
    const expected = divideRoundingUp(scaled, 10n ** 12n) + 1000n;
    expect(display.max_output_tokens).toBe(777);
    expect(BigInt(paymentRequired.accepts[0]!.amount)).toBe(expected);

    const openapi = JSON.stringify(await (await fetch(`${app.url}/openapi.json`)).json());
    expect(openapi).toContain(`${tiny} 0.123456/1.5`);
    const agents = await (await fetch(`${app.url}/AI-AGENTS.md`)).text();
    expect(agents).toContain(`- ${tiny}: 0.123456 USD per 1M input tokens, 1.5 per 1M output tokens, context 32000`);
    const console = await (await fetch(`${app.url}/`)).text();
    expect(console).toMatch(new RegExp(`${tiny}.*0\\.123456.*1\\.5`, "s"));
  });

  it("refuses more output than the model's own limit, before any 402", async () => {
    const response = await postJson(
      "/v1/chat/completions",
      { model: tiny, messages: [{ role: "user", content: "x" }], max_tokens: 1001 },
      {},
      app.url,
    );
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe("max_tokens");
  });
});
