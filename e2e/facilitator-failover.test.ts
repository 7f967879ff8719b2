import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decimalToAtomic } from "../server/core/money";
import { startExtraApp } from "./support/extra-app";
import { startFacilitatorFront } from "./support/facilitator-front";
import { fundedPayer } from "./support/funded-payer";
import {
  balances,
  chatBody,
  payingOpenAI,
  quote,
  stack,
  stackFacilitator,
  uptoPaymentClient,
} from "./support/payments";
import { paysvc } from "./support/run-paysvc";

const METRICS_TOKEN = "failover-metrics-token-0123456789";
const COOLDOWN_MS = 4000;
let front: Awaited<ReturnType<typeof startFacilitatorFront>>;
let app: Awaited<ReturnType<typeof startExtraApp>>;
let payer: Awaited<ReturnType<typeof fundedPayer>>;

beforeAll(async () => {
  // `first` is the embedded facilitator behind a front that fails on demand; `second` is the same facilitator
  // (the same settling account, so upto payments signed for one can be settled by the other) reached directly.
  front = await startFacilitatorFront(stack().facilitatorUrl);
  payer = await fundedPayer(20_000_000n);
  app = await startExtraApp({
    FACILITATOR_URL: "",
    FACILITATORS: `first=${front.url},second=${stack().facilitatorUrl}`,
    FACILITATOR_TIMEOUT_MS: "1500",
    FACILITATOR_FAILURE_THRESHOLD: "2",
    FACILITATOR_COOLDOWN_SECONDS: String(COOLDOWN_MS / 1000),
    METRICS_TOKEN,
  });
});
afterAll(async () => {
  await app?.stop();
  await front?.stop();
});

const exactClient = () => payingOpenAI(payer.key, `${app.url}/v1`);
const uptoClient = () =>
  new OpenAI({
    apiKey: "x402-no-key-needed",
    baseURL: `${app.url}/v1`,
    fetch: wrapFetchWithPayment(fetch, uptoPaymentClient(payer.key)),
    maxRetries: 0,
  });

/** The payer's latest ledger row (its calls run one at a time). */
function lastRow(): Record<string, unknown> {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return database
      .prepare("select * from payments where payer = ? order by id desc limit 1")
      .get(payer.address.toLowerCase()) as Record<string, unknown>;
  } finally {
    database.close();
  }
}

type Kind = "exact" | "exact stream" | "upto" | "upto stream";

/**
 * One paid call of `kind`, through the official SDK paying with the official x402 client: it must be served, the
 * payer charged once what it owes (exact: the quote; upto: the cost the answer states), to the pay-to, and its
 * ledger row settled by `settledBy`.
 */
async function paidCall(kind: Kind, settledBy: string) {
  const stream = kind.endsWith("stream");
  const body = chatBody(`failover ${kind} ${Date.now()}`, {
    max_tokens: 400,
    ...(stream && { stream: true, stream_options: { include_usage: true } }),
  });
  const quoted = BigInt((await quote("/v1/chat/completions", { ...body, stream: false }, app.url)).accepts[0]!.amount);
  const before = await balances(payer.address);
  const client = kind.startsWith("upto") ? uptoClient() : exactClient();
  let content: string | null | undefined;
  let cost: string | undefined;
  if (stream) {
    const chunks: { usage?: { cost?: string } | null }[] = [];
    const running = client.chat.completions.stream(body as never);
    running.on("chunk", (chunk) => chunks.push(chunk as never));
    content = (await running.finalChatCompletion()).choices[0]?.message.content;
    cost = chunks.at(-1)?.usage?.cost;
  } else {
    const completion = await client.chat.completions.create(body as never);
    content = completion.choices[0]?.message.content;
    cost = (completion.usage as unknown as { cost?: string }).cost;
  }
  expect(content).toContain("failover");
  await expect.poll(() => lastRow().status, { timeout: 10_000 }).toBe("settled");
  const row = lastRow();
  const owed = kind.startsWith("upto") ? decimalToAtomic(cost!, 6) : quoted;
  const after = await balances(payer.address);
  expect(before.payer - after.payer, kind).toBe(owed);
  expect(after.payTo - before.payTo, kind).toBe(owed);
  expect(row, kind).toMatchObject({
    scheme: kind.split(" ")[0],
    facilitator: settledBy,
    settled_amount: owed.toString(),
  });
  return row;
}

const ALL: Kind[] = ["exact", "exact stream", "upto", "upto stream"];

async function facilitatorHealth(name: string) {
  return (await (await fetch(`${app.url}/health`)).json()).checks.facilitators[name];
}

/** Waits out the first's cooldown, then one call closes its breaker (the trial goes to it and succeeds). */
async function recover() {
  front.setFault("all", { kind: "none" });
  await front.serve();
  await new Promise((resolve) => setTimeout(resolve, COOLDOWN_MS + 200));
  await paidCall("exact", "first");
  expect(await facilitatorHealth("first")).toMatchObject({ status: "up", breaker: "closed", consecutive_failures: 0 });
}

describe("two facilitators, the first failing", { timeout: 120_000 }, () => {
  it("serves through the first while it is up", async () => {
    for (const kind of ALL) await paidCall(kind, "first");
  });

  it("connection refused: every kind of call is served and settled by the second; the first's breaker opens", async () => {
    await front.refuse();
    for (const kind of ALL) await paidCall(kind, "second");
    const first = await facilitatorHealth("first");
    expect(first).toMatchObject({ status: "down" });
    expect(first.breaker).not.toBe("closed");
    expect(first.consecutive_failures).toBeGreaterThanOrEqual(2);
    const health = await (await fetch(`${app.url}/health`)).json();
    expect(health.checks.facilitator.status).toBe("up");
    expect(health.checks.facilitators.second).toMatchObject({ status: "up", breaker: "closed" });
  });

  it("recovers: the breaker closes again once a call through the first succeeds", recover);

  it("a hang: calls wait out the first's timeout, then the second serves them", async () => {
    front.setFault("all", { kind: "hang" });
    for (const kind of ALL) await paidCall(kind, "second");
    expect((await facilitatorHealth("first")).breaker).not.toBe("closed");
    await recover();
  });

  it("500 on settle only: the chain says the payment is unused, so the second settles it, once", async () => {
    front.setFault("settle", { kind: "error500" });
    const failedBefore = front.failed.settle;
    for (const kind of ALL) {
      const row = await paidCall(kind, "second");
      expect(row.status).toBe("settled");
    }
    // The first verified them (which keeps its breaker closed) and failed to settle them; the second settled each.
    expect(front.failed.settle - failedBefore).toBeGreaterThanOrEqual(2);
    await recover();
  });

  it("the first settles, then answers past the timeout: the payment lands once, the row is settled by the first", async () => {
    front.setFault("settle", { kind: "late", answerAfterMs: 3000 });
    const settlesBefore = front.passed.settle;
    for (const kind of ["exact", "upto stream"] as const) {
      const row = await paidCall(kind, "first");
      expect(row.transaction).toMatch(/^0x[0-9a-f]{64}$/);
    }
    expect(front.passed.settle - settlesBefore).toBe(2);
    // Reconciliation finds the rows as the chain has them.
    const checked = await paysvc(["ledger", "reconcile", "--check", "--all", "--json"], 120_000, {
      DATABASE_URL: `file:${stack().databasePath}`,
      CHAIN_RPC_URL: stack().chainRpcUrl,
      ...stackFacilitator(),
    });
    const report = JSON.parse(checked.stdout) as { rows: { id: number; outcome: string }[] };
    const row = lastRow();
    expect(report.rows.filter((entry) => entry.id === row.id)).toEqual([]);
    front.setFault("all", { kind: "none" });
  });

  it("counts each facilitator's calls and latency per operation in /metrics", async () => {
    const metrics = await (
      await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    ).text();
    for (const [name, facilitator, operation, outcome] of [
      ["requests_total", "first", "verify", "failed"],
      ["requests_total", "first", "settle", "failed"],
      ["requests_total", "second", "settle", "ok"],
      ["latency_seconds_count", "second", "verify", undefined],
    ]) {
      const labels = [`facilitator="${facilitator}"`, `operation="${operation}"`, outcome && `outcome="${outcome}"`];
      const line = metrics
        .split("\n")
        .find(
          (text) =>
            text.startsWith(`paysvc_facilitator_${name}{`) && labels.every((label) => !label || text.includes(label)),
        );
      expect(line, `${name} ${facilitator} ${operation}`).toMatch(/ [1-9]\d*$/);
    }
  });
});
