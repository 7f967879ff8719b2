import { mkdirSync } from "node:fs";
import { join } from "node:path";
import OpenAI from "openai";
import type { Browser, Page } from "playwright-core";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./support/chromium";
import { defaultCatalog } from "../config/catalog/default-catalog";

const { chat: gptModels, images: imageModels } = defaultCatalog();
import { paymentClient, stack } from "./support/payments";

const SCREENSHOTS = join(process.cwd(), "test-results", "console");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(() => browser?.close());

async function open(path: string, width = 1280): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  await page.goto(`${stack().appUrl}${path}`);
  return page;
}

async function buyKey(): Promise<string> {
  const paidFetch = wrapFetchWithPayment(fetch, paymentClient(stack().payers[7]!.privateKey));
  const response = await paidFetch(`${stack().appUrl}/prepaid/codes/auto`, { method: "POST" });
  expect(response.status).toBe(201);
  return ((await response.json()) as { code: string }).code;
}

describe("console in Chromium", () => {
  it("shows exactly the configured prices, rendered on the server", async () => {
    const page = await open("/");
    const rows = await page.locator('[data-testid="chat-prices"] tbody tr').allInnerTexts();
    expect(rows).toHaveLength(gptModels.length);
    for (const [index, model] of gptModels.entries()) {
      const cells = rows[index]!.split("\t").map((cell) => cell.trim());
      expect(cells.slice(0, 3)).toEqual([model.id, model.inputUsdPerMillion, model.outputUsdPerMillion]);
    }
    const images = await page.locator('[data-testid="image-prices"] tbody tr').allInnerTexts();
    expect(images.map((row) => row.split("\t").map((cell) => cell.trim()))).toEqual(
      imageModels.map((model) => [model.id, model.sizes.join(", "), model.usdPerImage]),
    );
    expect(await page.getByTestId("decision-price").innerText()).toContain("0.12 USD per 1M input tokens");
    const packs = await page.locator('[data-testid="pack-prices"] tbody tr').allInnerTexts();
    expect(packs[2]!.split("\t").map((cell) => cell.trim())).toEqual(["vendor-a/gpt-6-luna", "0.008000", "0.071000"]);
    expect(await page.getByTestId("network").innerText()).toBe("eip155:137");
    expect(await page.getByTestId("pay-to").innerText()).toBe(stack().payTo);
    await page.screenshot({ path: join(SCREENSHOTS, "prices.png"), fullPage: true });

    // Readable without JavaScript: the server sends the table itself.
    const html = await (await fetch(`${stack().appUrl}/`)).text();
    expect(html).toContain("vendor-a/gpt-5.6-sol");
    expect(html).toContain("14.00");
    await page.close();
  });

  it("looks up a prepaid key, and its used count grows after a prepaid call", async () => {
    const code = await buyKey();
    const page = await open("/keys");
    await page.getByLabel("Prepaid key").fill(code);
    await page.getByRole("button", { name: "Check key" }).click();
    await expect.poll(() => page.getByTestId("key-state").textContent()).toBe("Valid");
    expect(await page.getByTestId("key-model").innerText()).toBe("vendor-a/gpt-6-luna");
    expect(await page.getByTestId("budget-total").innerText()).toBe("100,000");
    expect(await page.getByTestId("budget-used").innerText()).toBe("0");
    // The key never reaches the URL or storage.
    expect(page.url()).not.toContain(code);
    expect(
      await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie),
    ).not.toContain(code);
    await page.screenshot({ path: join(SCREENSHOTS, "key-valid.png"), fullPage: true });

    const completion = await new OpenAI({
      apiKey: code,
      baseURL: `${stack().appUrl}/v1`,
      maxRetries: 0,
    }).chat.completions.create({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "spend a little" }],
    });
    await page.getByRole("button", { name: "Check key" }).click();
    await expect
      .poll(() => page.getByTestId("budget-used").textContent())
      .toBe(completion.usage!.total_tokens.toLocaleString("en-US"));
    await page.close();
  });

  it("says clearly when a key is unknown", async () => {
    const page = await open("/keys");
    await page.getByLabel("Prepaid key").fill("paysvc_pk_thisKeyDoesNotExist000000000000000000000");
    await page.keyboard.press("Enter");
    await expect
      .poll(() => page.getByTestId("key-result").getByRole("alert").textContent())
      .toMatch(/No prepaid key matches/);
    await page.screenshot({ path: join(SCREENSHOTS, "key-unknown.png"), fullPage: true });
    await page.close();
  });

  it("shows the free quota as bars that change after a free chat call", async () => {
    const page = await open("/quota");
    await expect.poll(() => page.getByTestId("per10Min-total").textContent()).toBe("10");
    const before = Number(await page.getByTestId("per10Min-used").innerText());
    // The browser and this test both reach the app from 127.0.0.1: the same caller.
    const response = await fetch(`${stack().appUrl}/v1/free/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ messages: [{ role: "user", content: "free hello" }] }),
    });
    expect(response.status).toBe(200);
    await response.text();
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => page.getByTestId("per10Min-used").textContent()).toBe(String(before + 1));
    expect(await page.getByTestId("perDay-used").innerText()).toBe(String(before + 1));
    expect(await page.getByTestId("quota-per10Min").innerText()).toMatch(/next slot frees in/);
    await page.screenshot({ path: join(SCREENSHOTS, "quota.png"), fullPage: true });
    await page.close();
  });

  it("works at a phone's 375 px width without horizontal page scroll", async () => {
    for (const path of ["/", "/keys", "/quota"]) {
      const page = await open(path, 375);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, path).toBeLessThanOrEqual(0);
      await page.screenshot({
        path: join(SCREENSHOTS, `phone${path === "/" ? "-prices" : path.replace("/", "-")}.png`),
        fullPage: true,
      });
      await page.close();
    }
  });

  it("is usable from the keyboard", async () => {
    const page = await open("/keys");
    await page.keyboard.press("Tab"); // skip link
    await page.keyboard.press("Tab"); // brand
    const focused: string[] = [];
    for (let index = 0; index < 6; index++) {
      await page.keyboard.press("Tab");
      focused.push(
        await page.evaluate(
          () => document.activeElement?.getAttribute("id") ?? document.activeElement?.textContent ?? "",
        ),
      );
    }
    expect(focused).toContain("prepaid-key");
    expect(focused).toContain("Check key");
    await page.close();
  });
});
