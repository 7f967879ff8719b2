import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { generatePrivateKey } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { atomicToDecimal } from "../server/core/money";
import { launchChromium } from "./support/chromium";
import { balances, polygon, quote, stack } from "./support/payments";
import { injectTestWallet, type TestWalletOptions } from "./support/test-wallet";

const SCREENSHOTS = join(process.cwd(), "test-results", "wallet-purchase");
const PACK = { model: "vendor-a/gpt-6-luna", tokens: 100_000 };
const POLYGON_HEX = `0x${polygon.chainId.toString(16)}`;
let browser: Browser;

beforeAll(async () => {
  mkdirSync(SCREENSHOTS, { recursive: true });
  browser = await launchChromium();
});
afterAll(() => browser?.close());

const pageProblems = new WeakMap<Page, string[]>();

/** A new page whose uncaught errors and console errors are kept, to check that failures stay sentences. */
async function newPage(width = 1280): Promise<Page> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const problems: string[] = [];
  pageProblems.set(page, problems);
  page.on("pageerror", (error) => problems.push(`uncaught: ${error.message}`));
  // The browser itself logs every answer of 4xx or 5xx and every refused connection; the page's own code must not.
  page.on("console", (message) => {
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource")) {
      problems.push(`console: ${message.text()}`);
    }
  });
  return page;
}

/** Closes the page after checking it threw nothing and logged no error of its own. */
async function closeClean(page: Page) {
  expect(pageProblems.get(page)).toEqual([]);
  await page.close();
}

/** A console page with a test wallet in it (none when `wallet` is undefined). */
async function openWithWallet(path: string, wallet: TestWalletOptions | undefined, width = 1280) {
  const page = await newPage(width);
  const injected = wallet ? await injectTestWallet(page, wallet) : undefined;
  await page.goto(`${stack().appUrl}${path}`);
  return { page, wallet: injected };
}

/** Chooses the pack and starts the purchase, as a person does. */
async function startPurchase(page: Page, pack = PACK) {
  const form = page.getByTestId("purchase");
  await form.getByLabel("Model", { exact: true }).selectOption(pack.model);
  await form.getByLabel("Tokens", { exact: true }).selectOption(String(pack.tokens));
  await form.getByRole("button", { name: "Buy with a browser wallet" }).click();
}

/** The card the purchase is in, as the person sees it. */
const screenshot = (page: Page, name: string) =>
  page
    .locator("section.card")
    .filter({ has: page.locator('[data-testid^="purchase"]') })
    .screenshot({ path: join(SCREENSHOTS, name) });

const failureText = (page: Page) => page.getByTestId("purchase-failure").textContent();
const packPrice = async (pack = PACK) => BigInt((await quote("/prepaid/codes", pack)).accepts[0]!.amount);

describe("buying a prepaid key with a browser wallet, in Chromium", () => {
  it("buys a 100,000-token pack on the embedded chain: the key shown once has exactly that balance", async () => {
    const payer = stack().payers[5]!;
    const price = await packPrice();
    const before = await balances(payer.address);
    // A wallet on Ethereum that does not know the deployment's chain: the page has it added, with the embedded RPC.
    const { page, wallet } = await openWithWallet("/", { privateKey: payer.privateKey });

    await startPurchase(page);
    await expect.poll(() => page.getByTestId("purchase-price").textContent()).toBe(atomicToDecimal(price, 6));
    expect(await page.getByTestId("purchase-balance").textContent()).toBe(atomicToDecimal(before.payer, 6));
    // Nothing is signed before the person confirms the price.
    expect(wallet!.requestsOf("eth_signTypedData_v4")).toEqual([]);
    await screenshot(page, "1-price-before-signing.png");

    await page.getByRole("button", { name: /^Sign and pay/ }).click();
    await expect.poll(() => page.getByTestId("bought-key").textContent()).toMatch(/^paysvc_pk_/);
    const code = (await page.getByTestId("bought-key").textContent())!;
    expect(await page.getByTestId("bought-balance").textContent()).toBe("100,000");
    expect(await page.getByTestId("bought-model").textContent()).toBe(PACK.model);
    expect(await page.getByTestId("purchase-bought").innerText()).toMatch(/shown only now/);
    await screenshot(page, "2-key-shown-once.png");
    // The key stays on the screen only: never in the URL or the browser's storage.
    expect(page.url()).not.toContain(code);
    expect(
      await page.evaluate(() => JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie),
    ).not.toContain(code);

    // The payer paid exactly the pack's quote, and the pay-to received it.
    const after = await balances(payer.address);
    expect(before.payer - after.payer).toBe(price);
    expect(after.payTo - before.payTo).toBe(price);
    // The wallet was asked to switch once, added the deployment's chain with the embedded RPC, and signed once.
    expect(wallet!.requestsOf("wallet_switchEthereumChain")).toEqual([
      { method: "wallet_switchEthereumChain", params: [{ chainId: POLYGON_HEX }] },
    ]);
    expect(wallet!.requestsOf("wallet_addEthereumChain")).toEqual([
      {
        method: "wallet_addEthereumChain",
        params: [expect.objectContaining({ chainId: POLYGON_HEX, rpcUrls: [stack().chainRpcUrl] })],
      },
    ]);
    expect(wallet!.requestsOf("eth_signTypedData_v4")).toHaveLength(1);
    await closeClean(page);

    // Its status, looked up on the Prepaid key page: exactly the pack's balance.
    const { page: keys } = await openWithWallet("/keys", undefined);
    await keys.getByLabel("Prepaid key").fill(code);
    await keys.getByRole("button", { name: "Check key" }).click();
    await expect.poll(() => keys.getByTestId("key-state").textContent()).toBe("Valid");
    expect(await keys.getByTestId("key-model").innerText()).toBe(PACK.model);
    expect(await keys.getByTestId("budget-total").innerText()).toBe("100,000");
    expect(await keys.getByTestId("budget-remaining").innerText()).toBe("100,000");
    expect(await keys.getByTestId("budget-used").innerText()).toBe("0");
    await closeClean(keys);
  });

  it("buys a pack above the client's default $1 cap from the Prepaid key page, with a wallet at window.ethereum", async () => {
    const payer = stack().payers[5]!;
    const large = { model: "vendor-a/gpt-5.6-sol", tokens: 1_000_000 };
    const price = await packPrice(large);
    expect(price).toBeGreaterThan(1_000_000n);
    const before = await balances(payer.address);
    // On a phone's 375 px.
    const { page, wallet } = await openWithWallet(
      "/keys",
      {
        privateKey: payer.privateKey,
        discovery: "window.ethereum",
        knownChains: { 1: "http://127.0.0.1:1", [polygon.chainId]: stack().chainRpcUrl },
      },
      375,
    );
    await startPurchase(page, large);
    await expect.poll(() => page.getByTestId("purchase-price").textContent()).toBe(atomicToDecimal(price, 6));
    await page.getByRole("button", { name: /^Sign and pay/ }).click();
    await expect.poll(() => page.getByTestId("bought-key").textContent()).toMatch(/^paysvc_pk_/);
    expect(await page.getByTestId("bought-balance").textContent()).toBe("1,000,000");
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    await screenshot(page, "6-phone-key-shown-once.png");
    expect(before.payer - (await balances(payer.address)).payer).toBe(price);
    // It knew the chain: switched once, nothing added.
    expect(wallet!.requestsOf("wallet_switchEthereumChain")).toHaveLength(1);
    expect(wallet!.requestsOf("wallet_addEthereumChain")).toEqual([]);
    await closeClean(page);
  });
  it("lets the person pick one of several announced wallets, and pays with that one", async () => {
    const [first, second] = [stack().payers[4]!, stack().payers[5]!];
    const before = await balances(second.address);
    const price = await packPrice();
    const page = await newPage();
    const other = await injectTestWallet(page, { privateKey: first.privateKey, name: "Other Wallet" });
    const chosen = await injectTestWallet(page, { privateKey: second.privateKey, name: "Chosen Wallet" });
    await page.goto(`${stack().appUrl}/`);
    await startPurchase(page);
    await page.getByRole("button", { name: "Chosen Wallet" }).waitFor();
    await screenshot(page, "7-choose-wallet.png");
    await page.getByRole("button", { name: "Chosen Wallet" }).click();
    await expect.poll(() => page.getByTestId("purchase-price").textContent()).toBe(atomicToDecimal(price, 6));
    await page.getByRole("button", { name: /^Sign and pay/ }).click();
    await expect.poll(() => page.getByTestId("bought-key").textContent()).toMatch(/^paysvc_pk_/);
    expect(before.payer - (await balances(second.address)).payer).toBe(price);
    expect(chosen.requestsOf("eth_signTypedData_v4")).toHaveLength(1);
    // The other wallet was never asked for anything.
    expect(other.requests()).toEqual([]);
    await closeClean(page);
  });
});

describe("a purchase that does not go through says why in a sentence, and nothing moves on the chain", () => {
  /** Runs `act` and checks that neither the payer's nor the pay-to's USDC moved. */
  async function nothingMoves(payer: `0x${string}`, act: () => Promise<void>) {
    const before = await balances(payer);
    await act();
    expect(await balances(payer)).toEqual(before);
  }

  it("the person rejects the signature", async () => {
    const payer = stack().payers[5]!;
    await nothingMoves(payer.address, async () => {
      const { page, wallet } = await openWithWallet("/", { privateKey: payer.privateKey, signature: "reject" });
      await startPurchase(page);
      await page.getByRole("button", { name: /^Sign and pay/ }).click();
      await expect.poll(() => failureText(page)).toMatch(/^You rejected the signature in your wallet/);
      expect(await failureText(page)).toMatch(/Nothing was charged\.$/);
      expect(wallet!.requestsOf("eth_signTypedData_v4")).toHaveLength(1);
      // The price is still on the page, to sign after all or cancel.
      expect(await page.getByRole("button", { name: /^Sign and pay/ }).isVisible()).toBe(true);
      await screenshot(page, "3-signature-rejected.png");
      await closeClean(page);
    });
  });

  it("the wallet has no USDC: the page says how much is needed and asks for no signature", async () => {
    const price = await packPrice();
    const { page, wallet } = await openWithWallet("/", { privateKey: generatePrivateKey() });
    await nothingMoves(wallet!.address, async () => {
      await startPurchase(page);
      await expect
        .poll(() => failureText(page))
        .toBe(
          `Not enough USDC: this wallet (${wallet!.address}) holds 0.000000 USDC on ${polygon.displayName} and the pack costs ${atomicToDecimal(price, 6)} USDC. Add at least ${atomicToDecimal(price, 6)} USDC to it and try again. Nothing was charged.`,
        );
      expect(await page.getByRole("button", { name: /^Sign and pay/ }).count()).toBe(0);
      expect(wallet!.requestsOf("eth_signTypedData_v4")).toEqual([]);
      await screenshot(page, "4-no-usdc.png");
    });
    await closeClean(page);
  });

  it("the wallet refuses to switch to the deployment's chain", async () => {
    const payer = stack().payers[5]!;
    await nothingMoves(payer.address, async () => {
      const { page, wallet } = await openWithWallet("/", { privateKey: payer.privateKey, switching: "refuse" });
      await startPurchase(page);
      await expect
        .poll(() => failureText(page))
        .toBe(
          `Your wallet is still on chain id 1: the switch was refused. Buying needs the wallet on ${polygon.displayName} (chain id ${polygon.chainId}); switch it there and try again. Nothing was charged.`,
        );
      expect(wallet!.requestsOf("wallet_switchEthereumChain")).toHaveLength(1);
      expect(wallet!.requestsOf("eth_signTypedData_v4")).toEqual([]);
      expect(await page.getByTestId("purchase-confirm").count()).toBe(0);
      await screenshot(page, "5-switch-refused.png");
      await closeClean(page);
    });
  });

  it("no wallet in the browser", async () => {
    const { page } = await openWithWallet("/", undefined);
    await startPurchase(page);
    await expect.poll(() => failureText(page)).toMatch(/^No browser wallet was found on this page\./);
    await closeClean(page);
  });

  it("the service refuses the signed payment (a 402 after signing)", async () => {
    const payer = stack().payers[5]!;
    await nothingMoves(payer.address, async () => {
      // A wallet whose signature is not its account's: the facilitator's verify refuses it.
      const { page, wallet } = await openWithWallet("/", {
        privateKey: payer.privateKey,
        signingKey: generatePrivateKey(),
      });
      await startPurchase(page);
      await page.getByRole("button", { name: /^Sign and pay/ }).click();
      await expect.poll(() => failureText(page)).toMatch(/^The service refused the signed payment: .*signature/i);
      expect(await failureText(page)).toMatch(
        /No key was issued and the payment was not collected\. Nothing was charged\.$/,
      );
      expect(wallet!.requestsOf("eth_signTypedData_v4")).toHaveLength(1);
      await closeClean(page);
    });
  });

  it("the service cannot be reached", async () => {
    const payer = stack().payers[5]!;
    await nothingMoves(payer.address, async () => {
      const { page, wallet } = await openWithWallet("/", { privateKey: payer.privateKey });
      // The purchase endpoint drops every connection, as an unreachable service would.
      await page.route("**/prepaid/codes", (route) => route.abort("connectionrefused"));
      await startPurchase(page);
      await expect
        .poll(() => failureText(page))
        .toBe("The service could not be reached. Check your connection and try again. Nothing was charged.");
      expect(wallet!.requestsOf("eth_signTypedData_v4")).toEqual([]);
      await closeClean(page);
    });
  });
});
