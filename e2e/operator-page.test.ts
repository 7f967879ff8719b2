import { chmodSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalPostgres, type LocalPostgres } from "../cli/dev-stack/local-postgres";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { launchChromium } from "./support/chromium";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorProxy } from "./support/facilitator-proxy";
import { fundedPayer } from "./support/funded-payer";
import { buyPrepaidCode, chatBody, payingOpenAI, quote, stack } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

/** Paid to an address of its own, so that the shared pay-to receives only what the shared ledger records. */
const OWN_PAY_TO = "0x000000000000000000000000000000000000bEEF";
const MODEL = "vendor-a/gpt-6-luna";
const OPERATOR_TOKEN = "operator-page-test-token-0123456789abcdef";
const SCREENSHOTS = join(process.cwd(), "test-results", "operator");
const ATTENTION = ["unsettled", "settle_unknown", "unpaid"] as const;
const STATUS_COLUMNS = ["settled", "not_charged", "failed", "unsettled", "unpaid"] as const;
const OPEN = ["pending", "verified", "settle_unknown"] as const;

/** `paysvc ledger report --json` as it prints it: amounts are strings. */
interface PrintedReport {
  since: string;
  lines: {
    endpoint: string;
    model: string;
    requests: Record<string, number>;
    revenueAtomic: string;
    revenueUsd: string;
    unpaidAtomic: string;
  }[];
  total: { requests: Record<string, number>; revenueAtomic: string; revenueUsd: string; unpaidAtomic: string };
  statuses: Record<string, { count: number; amountAtomic: string; amountUsd: string }>;
  prepaid: { keysSold: number; tokensSold: number; activeKeys: number; tokensOutstanding: number };
}

let browser: Browser;
let upstream: LocalUpstream;
let proxy: Awaited<ReturnType<typeof startFacilitatorProxy>>;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
  // A provider of this file's own, streaming at a model's pace, and a facilitator whose settles can be held.
  upstream = await startLocalUpstream({ port: 0, faultDirectives: true, deltaDelayMs: 20, streamDeltas: 12 });
  proxy = await startFacilitatorProxy(stack().facilitatorUrl);
});
afterAll(async () => {
  await browser?.close();
  await proxy?.stop();
  await upstream?.stop();
});

describe("the operator's page without OPERATOR_TOKEN", () => {
  it("does not exist: 404 for the page and for signing in", async () => {
    expect((await fetch(`${stack().appUrl}/operator`)).status).toBe(404);
    const signIn = await fetch(`${stack().appUrl}/operator/session`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: OPERATOR_TOKEN }),
    });
    expect(signIn.status).toBe(404);
    expect(signIn.headers.get("set-cookie")).toBeNull();
  });
});

describe.each(["sqlite", "postgresql"] as const)("the operator's page on %s", (engine) => {
  const directory = mkdtempSync(join(tmpdir(), `paysvc-operator-${engine}-`));
  let postgres: LocalPostgres | undefined;
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  /** A second instance over the same database. */
  let other: Awaited<ReturnType<typeof startExtraApp>>;
  let databaseUrl: string;

  beforeAll(async () => {
    if (engine === "postgresql") {
      // PostgreSQL runs as an unprivileged user when we are root: it must reach its data directory.
      chmodSync(directory, 0o755);
      postgres = await startLocalPostgres({ dataDir: join(directory, "postgres"), port: 0 });
      await postgres.createDatabase("operator");
      databaseUrl = postgres.url("operator");
    } else databaseUrl = `file:${join(directory, "ledger.sqlite")}`;
    const settings = {
      DATABASE_URL: databaseUrl,
      // The stack's pay-to: its built-in facilitator settles payments to no other.
      PAY_TO: OWN_PAY_TO,
      OPERATOR_TOKEN,
      FACILITATOR_URL: proxy.url,
      FACILITATOR_TIMEOUT_MS: "5000",
      UPSTREAM_BASE_URL: `${upstream.url}/v1`,
      // One failure opens the provider's breaker, for long: the page shows it open.
      PROVIDER_FAILURE_THRESHOLD: "1",
      PROVIDER_COOLDOWN_SECONDS: "600",
      TRUSTED_PROXIES: "127.0.0.1",
    };
    app = await startExtraApp({ ...settings, RECONCILE_INTERVAL_SECONDS: "1" });
    other = await startExtraApp(settings);
    await makeLedger(app.url);
  });
  afterAll(async () => {
    await app?.stop();
    await other?.stop();
    await postgres?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  it("refuses a wrong token with 401 and sets nothing; the session cookie is HttpOnly, Strict, Secure behind HTTPS", async () => {
    const signIn = (token: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/operator/session`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body: new URLSearchParams({ token }),
      });
    const wrong = await signIn(`${OPERATOR_TOKEN}-not`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get("set-cookie")).toBeNull();
    expect(await wrong.text()).toContain("That is not the operator's token; nothing was set.");

    const right = await signIn(OPERATOR_TOKEN);
    expect(right.status).toBe(303);
    expect(right.headers.get("location")).toBe("/operator");
    const cookie = right.headers.get("set-cookie")!;
    expect(cookie).toMatch(
      /^paysvc_operator=operator\.\d+\.\d+\.[\w-]{43}; Path=\/operator; Max-Age=28800; HttpOnly; SameSite=Strict$/,
    );
    expect(cookie).not.toContain(OPERATOR_TOKEN);
    // Behind a trusted proxy (TRUSTED_PROXIES) that says its client came over HTTPS, the cookie is __Host-
    // prefixed: Secure, Path=/, no Domain.
    const proxied = await signIn(OPERATOR_TOKEN, { "x-forwarded-proto": "https" });
    expect(proxied.headers.get("set-cookie")).toMatch(
      /^__Host-paysvc_operator=operator\.\d+\.\d+\.[\w-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict; Secure$/,
    );

    // The page itself: the form without a session, the figures with it.
    const signedOut = await (await fetch(`${app.url}/operator`)).text();
    expect(signedOut).toContain('action="/operator/session"');
    expect(signedOut).not.toContain("Revenue settled");
    const session = cookie.split(";")[0]!;
    const signedIn = await fetch(`${app.url}/operator`, { headers: { cookie: session } });
    expect(signedIn.status).toBe(200);
    expect(await signedIn.text()).toContain("Revenue settled");
    const forged = await fetch(`${app.url}/operator`, { headers: { cookie: `${session.slice(0, -2)}xx` } });
    expect(await forged.text()).not.toContain("Revenue settled");
  });

  it("shows, without JavaScript, the figures of `paysvc ledger report` after paid calls, a purchase, an unpaid stream and a failed provider", async () => {
    // Without client JavaScript: the page is the server's HTML, its forms plain POSTs.
    const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    try {
      await page.goto(`${app.url}/operator`);
      await page.getByLabel("Operator token").fill("not-the-operator-token-at-all-0123456789");
      await page.getByRole("button", { name: "Sign in" }).click();
      expect(await page.getByRole("alert").innerText()).toBe("That is not the operator's token; nothing was set.");
      expect(await context.cookies()).toEqual([]);

      await page.goto(`${app.url}/operator`);
      await page.getByLabel("Operator token").fill(OPERATOR_TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByTestId("endpoints").waitFor();
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: "paysvc_operator", httpOnly: true, sameSite: "Strict", secure: false });
      expect(cookie!.value).not.toContain(OPERATOR_TOKEN);

      // The page read once the background reconciliation recovered the lost settle: the ledger is final.
      await expect
        .poll(async () => (await page.reload(), await page.locator('tr[data-outcome="recovered"]').count()), {
          timeout: 30_000,
        })
        .toBe(1);
      expect(await page.getByTestId("reconciliation").innerText()).toMatch(
        /^Ended .* rows? not known to be final read against the chain/,
      );
      const since = await page.getByTestId("since").innerText();
      const printed = await paysvc(["ledger", "report", "--json", "--since", since], 60_000, {
        NETWORK: "eip155:137",
        DATABASE_URL: databaseUrl,
      });
      expect(printed.code, printed.stderr).toBe(0);
      const report = JSON.parse(printed.stdout) as PrintedReport;
      expect(report.since).toBe(since);
      await expectFigures(page, report);

      // The provider that failed: its breaker open after one failure, as /health says.
      const health = (await (await fetch(`${app.url}/health`)).json()) as {
        checks: { providers: Record<string, { breaker: string; consecutive_failures: number }> };
      };
      const providers = Object.entries(health.checks.providers);
      expect(providers.some(([, provider]) => provider.breaker === "open")).toBe(true);
      for (const [name, provider] of providers) {
        const row = page.locator(`[data-testid="providers"] tr[data-name="${name}"]`);
        expect(await row.locator('[data-figure="breaker"]').innerText()).toBe(provider.breaker);
        expect(await row.locator('[data-figure="failures"]').innerText()).toBe(String(provider.consecutive_failures));
      }
      expect(await page.locator('[data-testid="facilitators"] tbody tr').count()).toBeGreaterThan(0);

      const path = join(SCREENSHOTS, `operator-${engine}.png`);
      await page.screenshot({ path, fullPage: true });
      console.log(`operator's page on ${engine}: ${path}`);

      // The keys card: the key bought, found by its owner, revoked without JavaScript; refused at once.
      await page.getByLabel("Owner (wallet)").fill(bought.owner);
      await page.getByRole("button", { name: "Find keys" }).click();
      const row = page.getByTestId(`operator-key-${bought.id}`);
      expect(await row.innerText()).toContain(bought.code.slice(0, 16));
      expect(await page.locator('[data-testid="keys"] tbody tr').count()).toBe(1);
      await row.getByRole("button", { name: `Revoke key ${bought.id}` }).click();
      expect(await page.getByTestId("keys-outcome").innerText()).toMatch(/is revoked/);
      expect(await page.getByTestId(`operator-key-${bought.id}`).innerText()).toContain("revoked");
      for (const url of [app.url, other.url]) {
        const status = await fetch(`${url}/v1/prepaid/status`, { headers: { authorization: `Bearer ${bought.code}` } });
        expect(status.status).toBe(401);
      }

      // Signing out ends the session: the form again, no cookie.
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Operator token").waitFor();
      expect(await context.cookies()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("signs out on one instance and the session ends on the other; a cross-origin POST is refused; sign-in attempts are limited per address", async () => {
    const post = (base: string, path: string, headers: Record<string, string>, body?: URLSearchParams) =>
      fetch(`${base}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
        body,
      });
    const signedIn = async (base: string, session: string) =>
      (await (await fetch(`${base}/operator`, { headers: { cookie: session } })).text()).includes("Revenue settled");

    // A browser signs in on one instance: both instances (one host, two ports) take its session.
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    try {
      await page.goto(`${app.url}/operator`);
      await page.getByLabel("Operator token").fill(OPERATOR_TOKEN);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByTestId("endpoints").waitFor();
      const [cookie] = await context.cookies();
      const session = `${cookie!.name}=${cookie!.value}`;
      expect(await signedIn(other.url, session)).toBe(true);

      // Another site's page posting the sign-out form (a real browser sends its Origin): 403, nothing ended.
      const attacker = await context.newPage();
      await attacker.route("http://elsewhere.test/**", (route) =>
        route.fulfill({
          contentType: "text/html",
          body: `<form method="post" action="${other.url}/operator/sign-out"><button>Go</button></form>`,
        }),
      );
      await attacker.goto("http://elsewhere.test/");
      const [refused] = await Promise.all([
        attacker.waitForResponse(`${other.url}/operator/sign-out`),
        attacker.getByRole("button", { name: "Go" }).click(),
      ]);
      expect(refused.status()).toBe(403);
      // Even carrying the session, a foreign Origin does nothing: on either POST.
      const foreign = { origin: "http://elsewhere.test", cookie: session };
      expect((await post(other.url, "/operator/sign-out", foreign)).status).toBe(403);
      const foreignSignIn = await post(
        app.url,
        "/operator/session",
        foreign,
        new URLSearchParams({ token: OPERATOR_TOKEN }),
      );
      expect(foreignSignIn.status).toBe(403);
      expect(foreignSignIn.headers.get("set-cookie")).toBeNull();
      expect(await signedIn(app.url, session)).toBe(true);
      expect(await signedIn(other.url, session)).toBe(true);

      // Signing out on the other instance, in the browser: the session ends on the first too.
      await page.goto(`${other.url}/operator`);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByLabel("Operator token").waitFor();
      expect(await signedIn(other.url, session)).toBe(false);
      expect(await signedIn(app.url, session)).toBe(false);
    } finally {
      await context.close();
    }

    // Sign-in attempts from one address (as the trusted proxy names it), on both instances: 10, then 429.
    const from = (address: string) => ({ "x-forwarded-for": address });
    for (let attempt = 0; attempt < 10; attempt++) {
      const guess = new URLSearchParams({ token: `guess-${attempt}` });
      const answer = await post([app, other][attempt % 2]!.url, "/operator/session", from("198.51.100.20"), guess);
      expect(answer.status).toBe(401);
    }
    const right = new URLSearchParams({ token: OPERATOR_TOKEN });
    const limited = await post(app.url, "/operator/session", from("198.51.100.20"), right);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(limited.headers.get("set-cookie")).toBeNull();
    expect(await limited.text()).toContain("Too many sign-in attempts from your address");
    expect((await post(other.url, "/operator/session", from("198.51.100.20"), right)).status).toBe(429);
    // Another address signs in.
    expect((await post(other.url, "/operator/session", from("198.51.100.21"), right)).status).toBe(303);
  });
});

/**
 * Two paid chats, one whose settle is lost (recovered by the background reconciliation), a prepaid key bought and
 * used once, a stream whose settlement is refused, a provider failing.
 */
/** The key makeLedger bought, and its owner. */
let bought: { id: number; code: string; owner: string };

async function makeLedger(base: string) {
  const chat = chatBody("operator's page", { max_tokens: 20 });
  const price = BigInt((await quote("/v1/chat/completions", chat, base)).accepts[0]!.amount);
  const payer = await fundedPayer(20n * price + 5_000_000n);
  const openai = payingOpenAI(payer.key, `${base}/v1`);
  await openai.chat.completions.create(chat as OpenAI.ChatCompletionCreateParamsNonStreaming);
  await openai.chat.completions.create(chat as OpenAI.ChatCompletionCreateParamsNonStreaming);

  // A settle that never reaches the facilitator: settle_unknown, until the background reconciliation recovers it.
  proxy.setMode({ kind: "drop" });
  try {
    // What the caller gets does not matter here: the ledger says what became of it.
    await openai.chat.completions.create(chat as OpenAI.ChatCompletionCreateParamsNonStreaming).catch(() => undefined);
  } finally {
    proxy.setMode({ kind: "forward" });
  }

  const key = await buyPrepaidCode(payer.key, { model: MODEL, tokens: 100_000 }, "/prepaid/codes", base);
  bought = { id: key.id, code: key.code, owner: payer.address };
  await new OpenAI({ apiKey: key.code, baseURL: `${base}/v1`, maxRetries: 0 }).chat.completions.create({
    model: MODEL,
    messages: [{ role: "user", content: "spent from the key" }],
    max_tokens: 20,
  });

  // A stream passed on while its payment settles; the payer's funds leave before the settlement: unpaid.
  const streamed = chatBody("my funds leave mid-stream", { stream: true, max_tokens: 200 });
  const streamPrice = BigInt((await quote("/v1/chat/completions", streamed, base)).accepts[0]!.amount);
  const owner = await fundedPayer(streamPrice);
  proxy.setMode({ kind: "gate" });
  try {
    const reading = (async () => {
      const stream = await payingOpenAI(owner.key, `${base}/v1`).chat.completions.create(
        streamed as unknown as OpenAI.ChatCompletionCreateParamsStreaming,
      );
      for await (const _chunk of stream);
    })();
    const outcome = reading.then(
      () => "ended",
      (error: unknown) => String(error),
    );
    await proxy.settleAtGate(owner.address);
    await owner.drain();
    proxy.openGate();
    // The stream ends with an error event instead of its end: the client throws.
    expect(await outcome).not.toBe("ended");
  } finally {
    proxy.setMode({ kind: "forward" });
  }

  // The provider fails: nothing charged, and its breaker opens (PROVIDER_FAILURE_THRESHOLD=1).
  const failing = chatBody("[paysvc-dev-fault:http-error]", { max_tokens: 20 });
  await expect(
    openai.chat.completions.create(failing as OpenAI.ChatCompletionCreateParamsNonStreaming),
  ).rejects.toMatchObject({ status: 502 });
}

/** Every figure of the page equals the report's: per endpoint and model, the totals, what needs a look, prepaid. */
async function expectFigures(page: Page, report: PrintedReport) {
  // The report's own story: three chats (one recovered) and a key settled, a stream unpaid, a call not charged, a
  // key sold and used.
  expect(report.total.requests).toEqual({ settled: 4, unpaid: 1, not_charged: 1 });
  expect(report.prepaid).toMatchObject({ keysSold: 1, tokensSold: 100_000, activeKeys: 1 });
  expect(report.prepaid.tokensOutstanding).toBeLessThan(100_000);
  expect(BigInt(report.statuses.unpaid!.amountAtomic)).toBeGreaterThan(0n);

  const perEndpoint = new Map<string, PrintedReport["lines"][number]>();
  for (const line of report.lines) {
    const key = `${line.endpoint} ${line.model}`;
    const sum = perEndpoint.get(key);
    if (!sum) perEndpoint.set(key, { ...line, requests: { ...line.requests } });
    else {
      for (const [status, count] of Object.entries(line.requests)) {
        sum.requests[status] = (sum.requests[status] ?? 0) + count;
      }
      sum.revenueAtomic = String(BigInt(sum.revenueAtomic) + BigInt(line.revenueAtomic));
      sum.unpaidAtomic = String(BigInt(sum.unpaidAtomic) + BigInt(line.unpaidAtomic));
    }
  }
  const rows = page.locator('[data-testid="endpoints"] tbody tr');
  expect(await rows.count()).toBe(perEndpoint.size);
  const expectRow = async (row: ReturnType<Page["locator"]>, figures: Omit<PrintedReport["total"], "revenueUsd">) => {
    for (const status of STATUS_COLUMNS) {
      expect(await row.locator(`[data-status="${status}"]`).innerText()).toBe(String(figures.requests[status] ?? 0));
    }
    const open = OPEN.reduce((sum, status) => sum + (figures.requests[status] ?? 0), 0);
    expect(await row.locator('[data-status="open"]').innerText()).toBe(String(open));
    expect(await row.locator('[data-figure="revenue"]').getAttribute("data-atomic")).toBe(figures.revenueAtomic);
    expect(await row.locator('[data-figure="unpaid"]').getAttribute("data-atomic")).toBe(figures.unpaidAtomic);
  };
  for (const line of perEndpoint.values()) {
    const row = page.locator(
      `[data-testid="endpoints"] tbody tr[data-endpoint="${line.endpoint}"][data-model="${line.model}"]`,
    );
    await expectRow(row, line);
    const revenueUsd = (Number(line.revenueAtomic) / 1e6).toFixed(6);
    expect(await row.locator('[data-figure="revenue"]').innerText()).toBe(revenueUsd);
  }
  const totalRow = page.locator('[data-testid="endpoints"] tfoot tr');
  await expectRow(totalRow, report.total);
  expect(await totalRow.locator('[data-figure="revenue"]').innerText()).toBe(report.total.revenueUsd);
  expect(await page.getByTestId("tile-revenue").innerText()).toContain(`${report.total.revenueUsd} USD`);

  for (const status of ATTENTION) {
    const row = page.locator(`[data-testid="attention"] tr[data-status="${status}"]`);
    const figures = report.statuses[status] ?? { count: 0, amountAtomic: "0", amountUsd: "0.000000" };
    expect(await row.locator('[data-figure="count"]').innerText()).toBe(String(figures.count));
    expect(await row.locator('[data-figure="amount"]').innerText()).toBe(figures.amountUsd);
    expect(await row.locator('[data-figure="amount"]').getAttribute("data-atomic")).toBe(figures.amountAtomic);
  }
  const unpaidRows = page.locator('[data-testid="attention-rows"] tr[data-status="unpaid"]');
  expect(await unpaidRows.count()).toBe(1);
  expect(await unpaidRows.locator("[data-atomic]").getAttribute("data-atomic")).toBe(
    report.statuses.unpaid!.amountAtomic,
  );

  const prepaid = page.getByTestId("prepaid");
  for (const [figure, value] of [
    ["keys-sold", report.prepaid.keysSold],
    ["tokens-sold", report.prepaid.tokensSold],
    ["active-keys", report.prepaid.activeKeys],
    ["tokens-outstanding", report.prepaid.tokensOutstanding],
  ] as const) {
    expect(await prepaid.locator(`[data-figure="${figure}"]`).innerText()).toBe(value.toLocaleString("en-US"));
  }

  // Both charts add up to the report's revenue: every payment is of the last hour.
  for (const chart of ["hourly", "daily"]) {
    let sum = 0n;
    for (const bar of await page.locator(`svg[data-chart="${chart}"] rect.chart-bar`).all()) {
      sum += BigInt((await bar.getAttribute("data-atomic")) ?? "0");
    }
    expect(sum.toString()).toBe(report.total.revenueAtomic);
  }
}
