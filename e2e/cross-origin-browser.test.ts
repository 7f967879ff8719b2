import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./support/chromium";
import { bundlePageScript, servePage, type CrossOriginPageServer } from "./support/cross-origin-page";
import type { CrossOriginPage } from "./support/cross-origin-page-script";
import { startExtraApp } from "./support/extra-app";
import { buyPrepaidCode, chatBody, quote, stack, usdcBalance } from "./support/payments";
import { recordPreflights } from "./support/preflights";

let browser: Browser;
let script: string;
const servers: CrossOriginPageServer[] = [];

beforeAll(async () => {
  script = await bundlePageScript();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await Promise.all(servers.map((server) => server.close()));
});

/** A web app's page, loaded from an origin of its own (another port than the app's). */
async function openPage(): Promise<{ page: Page; origin: string }> {
  const server = await servePage(script);
  servers.push(server);
  const page = await browser.newPage();
  await page.goto(`${server.origin}/`);
  return { page, origin: server.origin };
}

/** The page script's API, as code running in the page reaches it (page.evaluate sends functions as source). */
type PageGlobal = { crossOriginPage: CrossOriginPage };

describe("a page on another origin, in Chromium", () => {
  it("pays a chat completion with the official x402 client and reads the settlement", async () => {
    const payer = stack().payers[6]!;
    const body = chatBody("Paid from a web app on another origin");
    const url = `${stack().appUrl}/v1/chat/completions`;
    const amount = (await quote("/v1/chat/completions", body)).accepts[0]!.amount;
    const before = await usdcBalance(payer.address);
    const { page, origin } = await openPage();
    expect(origin).not.toBe(new URL(stack().appUrl).origin);
    const preflights = await recordPreflights(page);

    const report = await page.evaluate(
      ({ url, key, body }) => (globalThis as unknown as PageGlobal).crossOriginPage.payChat(url, key, body),
      { url, key: payer.privateKey, body },
    );

    expect(report.quote).toEqual({ status: 402, amount });
    expect(report.paid).toMatchObject({
      status: 200,
      settlement: { success: true, transaction: expect.stringMatching(/^0x[0-9a-fA-F]{64}$/) },
      serverTiming: expect.stringContaining("dur="),
      content: expect.stringMatching(/\S/),
    });
    expect(report.paid.settlement?.payer?.toLowerCase()).toBe(payer.address.toLowerCase());
    expect(before - (await usdcBalance(payer.address))).toBe(BigInt(amount));
    // The JSON body made the browser ask first; the answer allowed the payment headers the paid retry sends.
    const asked = preflights().filter((preflight) => preflight.url === url);
    expect(asked.length).toBeGreaterThan(0);
    expect(asked[0]).toMatchObject({
      requestHeaders: { origin, "access-control-request-method": "POST" },
      status: 204,
      responseHeaders: { "access-control-allow-origin": "*", "access-control-allow-methods": "POST, OPTIONS" },
    });
    expect(asked[0]!.responseHeaders!["access-control-allow-headers"]).toContain("PAYMENT-SIGNATURE");
    await page.close();
  });
});

describe("a page on another origin calling the Messages API", () => {
  it("spends a prepaid key sent as x-api-key, with Anthropic's version and beta headers", async () => {
    const key = await buyPrepaidCode(stack().payers[6]!.privateKey, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const { page } = await openPage();
    const headers = { "x-api-key": key.code, "anthropic-version": "2023-06-01", "anthropic-beta": "tools-2024-04-04" };
    const body = {
      model: "vendor-a/gpt-6-luna",
      max_tokens: 32,
      messages: [{ role: "user", content: "Hi from a page" }],
    };
    const report = await page.evaluate(
      ({ url, headers, body }) => (globalThis as unknown as PageGlobal).crossOriginPage.post(url, headers, body),
      { url: `${stack().appUrl}/v1/messages`, headers, body },
    );
    expect(report).toMatchObject({ status: 200, body: { type: "message", role: "assistant" } });
    const used = (report as { body: { usage: { input_tokens: number; output_tokens: number } } }).body.usage;
    const status = await fetch(`${key.api_base}/prepaid/status`, { headers: { authorization: `Bearer ${key.code}` } });
    const tokens = ((await status.json()) as { tokens: { used: number } }).tokens;
    expect(tokens.used).toBe(used.input_tokens + used.output_tokens);
    await page.close();
  });
});

describe("with CORS_ORIGINS naming one origin", () => {
  let app: Awaited<ReturnType<typeof startExtraApp>>;
  let allowed: Awaited<ReturnType<typeof openPage>>;
  let other: Awaited<ReturnType<typeof openPage>>;
  beforeAll(async () => {
    [allowed, other] = await Promise.all([openPage(), openPage()]);
    app = await startExtraApp({ CORS_ORIGINS: allowed.origin });
  });
  afterAll(async () => {
    await app?.stop();
  });

  it("lets that origin's pages read the answers, and no other's", async () => {
    const url = `${app.url}/v1/models`;
    const read = (page: Page) =>
      page.evaluate((url) => (globalThis as unknown as PageGlobal).crossOriginPage.read(url), url);
    expect(await read(allowed.page)).toEqual({ status: 200 });
    expect(await read(other.page)).toEqual({ error: expect.stringContaining("Failed to fetch") });
    // Still served: CORS keeps the answer from the other page, not the request from the service.
    const direct = await fetch(url, { headers: { origin: other.origin } });
    expect(direct.status).toBe(200);
    expect(direct.headers.get("access-control-allow-origin")).toBeNull();
    expect(direct.headers.get("vary")?.split(/,\s*/)).toContain("Origin");
    const preflight = await fetch(`${app.url}/v1/chat/completions`, {
      method: "OPTIONS",
      headers: { origin: allowed.origin, "access-control-request-method": "POST" },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(allowed.origin);
    expect(preflight.headers.get("access-control-allow-methods")).toBe("POST, OPTIONS");
  });
});
