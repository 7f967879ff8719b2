import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { buyPrepaidCode, payingOpenAI, quote, stack } from "./support/payments";
import { paysvc } from "./support/run-paysvc";

const MODEL = "vendor-a/gpt-6-luna";
const OWN_PAY_TO = "0x000000000000000000000000000000000000dEaD";
const payer = () => stack().payers[4]!;
const chat = { model: MODEL, messages: [{ role: "user" as const, content: "ledger report" }], max_tokens: 20 };

describe("paysvc ledger report", () => {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-ledger-"));
  const env = { NETWORK: "eip155:137", DATABASE_URL: `file:${join(directory, "ledger.sqlite")}` };
  let chatAmount: bigint;
  let packAmount: bigint;
  let failingAmount: bigint;

  beforeAll(async () => {
    // An app over a ledger of its own: two paid chats, one that fails upstream (not charged), one key bought.
    // Paid to an address of its own, so that the shared pay-to receives only what the shared ledger records.
    const app = await startExtraApp({ DATABASE_URL: env.DATABASE_URL, PAY_TO: OWN_PAY_TO });
    try {
      chatAmount = BigInt((await quote("/v1/chat/completions", chat, app.url)).accepts[0]!.amount);
      const openai = payingOpenAI(payer().privateKey, `${app.url}/v1`);
      await openai.chat.completions.create(chat);
      await openai.chat.completions.create(chat);
      const failing = { ...chat, messages: [{ role: "user" as const, content: "[paysvc-dev-fault:http-error]" }] };
      failingAmount = BigInt((await quote("/v1/chat/completions", failing, app.url)).accepts[0]!.amount);
      await expect(openai.chat.completions.create(failing)).rejects.toMatchObject({ status: 502 });
      const pack = { model: MODEL, tokens: 100_000 };
      packAmount = BigInt((await quote("/prepaid/codes", pack, app.url)).accepts[0]!.amount);
      await buyPrepaidCode(payer().privateKey, pack, "/prepaid/codes", app.url);
    } finally {
      await app.stop();
    }
  });
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("counts payments and sums settled revenue by day, endpoint and model, exactly", async () => {
    const { code, stdout } = await paysvc(["ledger", "report", "--json"], 60_000, env);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    const today = new Date().toISOString().slice(0, 10);
    expect(report).toMatchObject({ network: "eip155:137", by: "day" });
    expect(report.lines).toEqual([
      {
        period: today,
        endpoint: "/prepaid/codes",
        model: MODEL,
        requests: { settled: 1 },
        revenueAtomic: packAmount.toString(),
        revenueUsd: (Number(packAmount) / 1e6).toFixed(6),
        unpaidAtomic: "0",
      },
      {
        period: today,
        endpoint: "/v1/chat/completions",
        model: MODEL,
        requests: { not_charged: 1, settled: 2 },
        revenueAtomic: (2n * chatAmount).toString(),
        revenueUsd: (Number(2n * chatAmount) / 1e6).toFixed(6),
        unpaidAtomic: "0",
      },
    ]);
    expect(report.total.revenueAtomic).toBe((2n * chatAmount + packAmount).toString());
    // Every status with its amount, and the prepaid keys: what the operator's page shows from the same report.
    expect(report.statuses).toEqual({
      settled: {
        count: 3,
        amountAtomic: (2n * chatAmount + packAmount).toString(),
        amountUsd: (Number(2n * chatAmount + packAmount) / 1e6).toFixed(6),
      },
      not_charged: {
        count: 1,
        amountAtomic: failingAmount.toString(),
        amountUsd: (Number(failingAmount) / 1e6).toFixed(6),
      },
    });
    expect(report.prepaid).toEqual({ keysSold: 1, tokensSold: 100_000, activeKeys: 1, tokensOutstanding: 100_000 });
  });

  it("prints the same as CSV and as a table with a total, by hour too", async () => {
    const asCsv = await paysvc(["ledger", "report", "--csv", "--by", "hour", "--since", "2h"], 60_000, env);
    expect(asCsv.code).toBe(0);
    const rows = asCsv.stdout
      .trim()
      .split("\r\n")
      .map((line) => line.split(","));
    expect(rows[0]).toEqual([
      "PERIOD",
      "ENDPOINT",
      "MODEL",
      "SETTLED",
      "NOT_CHARGED",
      "FAILED",
      "UNSETTLED",
      "UNPAID",
      "OPEN",
      "REVENUE_USD",
      "REVENUE_ATOMIC",
      "UNPAID_ATOMIC",
    ]);
    expect(rows.slice(1).map((row) => [row[1], row[3], row[4], row[10], row[11]])).toEqual([
      ["/prepaid/codes", "1", "0", packAmount.toString(), "0"],
      ["/v1/chat/completions", "2", "1", (2n * chatAmount).toString(), "0"],
    ]);
    expect(rows[1]![0]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:00Z$/);
    const asTable = await paysvc(["ledger", "report"], 60_000, env);
    expect(asTable.stdout).toMatch(
      /^eip155:137, payments since .* by day \(UTC\)\nprepaid: 1 key sold \(100000 tokens\); 100000 tokens outstanding on 1 active key\nneeding a look: unsettled 0, settle_unknown 0, unpaid 0\n/,
    );
    expect(asTable.stdout).toMatch(
      new RegExp(`\\nTOTAL\\s+3\\s+1\\s+0\\s+0\\s+0\\s+0\\s+[\\d.]+\\s+${2n * chatAmount + packAmount}\\s+0\\n?$`),
    );
    const future = await paysvc(["ledger", "report", "--since", "2099-01-01"], 60_000, env);
    expect(future.stdout).toMatch(/: none\n$/);
  });

  it("refuses bad options and a bad database with one line, exit code 2 or 1", async () => {
    for (const args of [
      ["--since", "yesterday"],
      ["--by", "week"],
      ["--json", "--csv"],
    ]) {
      const refused = await paysvc(["ledger", "report", ...args], 60_000, env);
      expect(refused.code).toBe(2);
      expect(refused.stderr.trim().split("\n")).toHaveLength(1);
      expect(refused.stdout).toBe("");
    }
    const badUrl = await paysvc(["ledger", "report"], 60_000, { ...env, DATABASE_URL: "mysql://x/y" });
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/DATABASE_URL/);
    const unreachable = await paysvc(["ledger", "report"], 60_000, {
      ...env,
      DATABASE_URL: "postgres://paysvc:secret-pw@127.0.0.1:1/paysvc",
    });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^paysvc: DATABASE_URL: cannot use the PostgreSQL database at /);
    expect(unreachable.stderr).not.toContain("secret-pw");
  });
});
