import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "./support/chromium";
import { fundedPayer } from "./support/funded-payer";
import { decimalToAtomic } from "../server/core/money";
import { buyPrepaidCode, stack, usdcBalance } from "./support/payments";
import { injectTestWallet } from "./support/test-wallet";

const SCREENSHOTS = join(process.cwd(), "test-results", "my-keys");
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(() => browser?.close());

async function keyStatus(code: string) {
  return (await fetch(`${stack().appUrl}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } })).status;
}

/** The page's own errors (not the browser's log of 4xx answers), kept to check the page stays quiet. */
function problemsOf(page: Page): string[] {
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      problems.push(`console: ${message.text()}`);
    }
  });
  return problems;
}

describe("My keys, in Chromium with an EIP-6963 wallet", () => {
  it("signs in once, shows the wallet's keys, rotates one (the new code copied) and revokes one", async () => {
    const payer = await fundedPayer(40_000n);
    const first = await buyPrepaidCode(payer.key, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const second = await buyPrepaidCode(payer.key, { model: "vendor-a/gpt-6-luna", tokens: 200_000 });

    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: stack().appUrl });
    const page = await context.newPage();
    const problems = problemsOf(page);
    const wallet = await injectTestWallet(page, { privateKey: payer.key });
    await page.goto(`${stack().appUrl}/keys/mine`);
    await page.getByRole("button", { name: "Sign in with your wallet" }).click();
    await expect.poll(() => page.getByTestId("owner").textContent()).toBe(payer.address.toLowerCase());
    // One signature (EIP-191, the sign-in message for this origin), no payment.
    const signed = wallet.requestsOf("personal_sign");
    expect(signed).toHaveLength(1);
    const message = Buffer.from((signed[0]!.params[0] as string).slice(2), "hex").toString("utf8");
    expect(message).toContain(`${new URL(stack().appUrl).host} wants you to sign in with your Ethereum account:`);
    expect(wallet.requestsOf("eth_signTypedData_v4")).toEqual([]);

    const rowOf = (id: number) => page.getByTestId(`key-${id}`);
    await expect.poll(() => rowOf(first.id).innerText()).toContain(first.code.slice(0, 16));
    expect(await rowOf(second.id).innerText()).toContain("active");
    await page.locator("section.card").screenshot({ path: join(SCREENSHOTS, "1-signed-in.png") });

    // Top up: 100,000 more tokens on the first key, paid with the same wallet (one EIP-712 authorization).
    const before = await usdcBalance(payer.address);
    await rowOf(first.id).getByRole("button", { name: "Top up" }).click();
    await page.getByLabel("Tokens to add").selectOption("100000");
    await page.getByRole("button", { name: "Get the price" }).click();
    await expect.poll(() => page.getByTestId("purchase-price").isVisible()).toBe(true);
    const price = decimalToAtomic((await page.getByTestId("purchase-price").textContent())!, 6);
    expect(await page.getByTestId("purchase-confirm").innerText()).toContain(`Adds to key #${first.id}`);
    await page.locator("section.card").screenshot({ path: join(SCREENSHOTS, "1b-top-up-price.png") });
    await page.getByRole("button", { name: /^Sign and pay/ }).click();
    await expect
      .poll(() => page.getByTestId("top-up-done").textContent())
      .toBe(`Added 100,000 tokens to key #${first.id}.`);
    await expect.poll(() => page.getByTestId(`key-${first.id}-remaining`).textContent()).toBe("200,000 of 200,000");
    expect(wallet.requestsOf("eth_signTypedData_v4")).toHaveLength(1);
    expect(before - (await usdcBalance(payer.address))).toBe(price);
    await page.locator("section.card").screenshot({ path: join(SCREENSHOTS, "1c-topped-up.png") });

    // Signed in for the visit: a reload shows the keys again, without another signature.
    await page.reload();
    await expect.poll(() => rowOf(first.id).isVisible()).toBe(true);
    expect(wallet.requestsOf("personal_sign")).toHaveLength(1);

    await rowOf(first.id).getByRole("button", { name: "Rotate" }).click();
    await expect.poll(() => page.getByTestId("new-code").textContent()).toMatch(/^paysvc_pk_/);
    const code = (await page.getByTestId("new-code").textContent())!;
    await page.getByRole("button", { name: "Copy the new code" }).click();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(code);
    await page.locator("section.card").screenshot({ path: join(SCREENSHOTS, "2-rotated.png") });
    expect(await keyStatus(first.code)).toBe(401);
    expect(await keyStatus(code)).toBe(200);
    // The code lives on the screen only.
    expect(await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage))).not.toContain(
      code,
    );

    await rowOf(second.id).getByRole("button", { name: "Revoke" }).click();
    await rowOf(second.id).getByRole("button", { name: "Revoke for good" }).click();
    await expect.poll(() => rowOf(second.id).innerText()).toContain("revoked");
    expect(await keyStatus(second.code)).toBe(401);
    await page.locator("section.card").screenshot({ path: join(SCREENSHOTS, "3-revoked.png") });

    await page.getByRole("button", { name: "Sign out" }).click();
    await expect.poll(() => page.getByRole("button", { name: "Sign in with your wallet" }).isVisible()).toBe(true);
    await page.reload();
    await expect.poll(() => page.getByRole("button", { name: "Sign in with your wallet" }).isVisible()).toBe(true);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("says so when the person declines to sign, and shows nothing", async () => {
    const payer = await fundedPayer(10_000n);
    const page = await browser.newPage();
    const problems = problemsOf(page);
    await injectTestWallet(page, { privateKey: payer.key, signature: "reject" });
    await page.goto(`${stack().appUrl}/keys/mine`);
    await page.getByRole("button", { name: "Sign in with your wallet" }).click();
    await expect
      .poll(() => page.getByTestId("my-keys-failure").textContent())
      .toBe("You declined to sign: you are not signed in.");
    expect(await page.locator("table").count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });
});
