import { mkdtempSync, readdirSync, readFileSync, chmodSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wrapFetchWithPayment } from "@x402/fetch";
import OpenAI from "openai";
import pg from "pg";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../cli/dev-stack/next-app";
import { startLocalPostgres, type LocalPostgres } from "../cli/dev-stack/local-postgres";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { decimalToAtomic } from "../server/core/money";
import { fundedPayer } from "./support/funded-payer";
import { startService, stopService } from "./support/paysvc-service";
import {
  buyPrepaidCode,
  paymentClient,
  payingOpenAI,
  stack,
  stackFacilitator,
  uptoPaymentClient,
  usdcBalance,
} from "./support/payments";

/**
 * A production deployment on a real PostgreSQL server, on the shared chain and facilitator, whose database stops
 * for 10 s (then starts again) or is paused, under paid and prepaid traffic: every request the database cannot
 * serve is a 503 with a body and charges nothing, every answer delivered is charged exactly once (the records of
 * settlements and charges made while it was away land when it is back), and the process serves again by itself.
 */
const directory = mkdtempSync(join(tmpdir(), "paysvc-db-outage-"));
// PostgreSQL runs as an unprivileged user when we are root: it must reach its data directory.
chmodSync(directory, 0o755);
const MODEL = "vendor-a/gpt-6-luna";
let provider: LocalUpstream;
let postgres: LocalPostgres;
let service: Awaited<ReturnType<typeof startService>>;
let databaseUrl: string;

beforeAll(async () => {
  // Streams of 30 deltas 100 ms apart (3 s): started before the database stops, they end while it is away.
  provider = await startLocalUpstream({ port: 0, streamDeltas: 30, deltaDelayMs: 100 });
  postgres = await startLocalPostgres({ dataDir: join(directory, "postgres"), port: 0 });
  await postgres.createDatabase("paysvc");
  databaseUrl = postgres.url("paysvc");
  service = await startService({
    NETWORK: "eip155:137",
    PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
    ...stackFacilitator(),
    // The chain the app reads payers' funds on (what an upto payment or an exact stream may owe at once).
    CHAIN_RPC_URL: stack().chainRpcUrl,
    UPSTREAM_BASE_URL: `${provider.url}/v1`,
    DATABASE_URL: databaseUrl,
    DATABASE_TIMEOUT_SECONDS: "2",
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    // The records must land by themselves, not through reconciliation.
    RECONCILE_INTERVAL_SECONDS: "0",
  });
}, 120_000);
afterAll(async () => {
  if (service) await stopService(service);
  await postgres?.stop();
  await provider?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** What the callers saw: every answer, and what each delivered one says it cost. */
interface Tally {
  statuses: number[];
  /** Bodies of the refusals: each must say why. */
  refusals: { status: number; code?: string }[];
  /** Atomic USDC the delivered x402 answers state, per payer. */
  paid: Map<string, bigint>;
  /** Tokens the delivered prepaid answers state they charged. */
  prepaidTokens: number;
}
const tally: Tally = { statuses: [], refusals: [], paid: new Map(), prepaidTokens: 0 };

function paidBy(payer: string, cost: string) {
  tally.paid.set(payer, (tally.paid.get(payer) ?? 0n) + decimalToAtomic(cost, 6));
}

const chat = (label: string, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  messages: [{ role: "user", content: `outage ${label}` }],
  max_tokens: 60,
  ...extra,
});

/** One paid (exact) whole answer, through the official x402 fetch wrapper. */
async function exactCall(payer: { key: `0x${string}`; address: string }, label: string) {
  const paidFetch = wrapFetchWithPayment(fetch, paymentClient(payer.key));
  const response = await paidFetch(`${service.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(chat(label)),
  });
  const body = (await response.json()) as { usage?: { cost?: string }; error?: { code?: string } };
  tally.statuses.push(response.status);
  if (response.status === 200) paidBy(payer.address, body.usage!.cost!);
  else tally.refusals.push({ status: response.status, code: body.error?.code });
  return response.status;
}

/** One whole answer on the prepaid key, through the official openai SDK. */
async function prepaidCall(code: string, label: string) {
  const client = new OpenAI({ apiKey: code, baseURL: `${service.url}/v1`, maxRetries: 0 });
  try {
    const completion = await client.chat.completions.create(chat(label) as never);
    tally.statuses.push(200);
    tally.prepaidTokens += (completion.usage as unknown as { prepaid_charged_tokens: number }).prepaid_charged_tokens;
    return 200;
  } catch (error) {
    const { status, code } = error as { status: number; code?: string };
    tally.statuses.push(status);
    tally.refusals.push({ status, code });
    return status;
  }
}

/** A stream paid on the prepaid key or with upto, running until its end; resolves with whether it ended whole. */
function longStream(client: OpenAI, label: string, onCost: (usage: Record<string, unknown>) => void) {
  const running = client.chat.completions.stream(
    chat(label, { max_tokens: 400, stream: true, stream_options: { include_usage: true } }) as never,
  );
  let chunks = 0;
  let usage: Record<string, unknown> | undefined;
  running.on("chunk", (chunk) => {
    chunks += 1;
    usage = ((chunk as { usage?: Record<string, unknown> }).usage ?? usage) as never;
  });
  const done = running.finalChatCompletion().then(
    () => {
      tally.statuses.push(200);
      onCost(usage!);
      return true;
    },
    () => false,
  );
  return { started: () => chunks > 0, done };
}

async function health() {
  const response = await fetch(`${service.url}/health`);
  const body = (await response.json()) as { checks: { database: { status: string; pending_writes: number } } };
  return { status: response.status, database: body.checks.database };
}

async function readDatabase<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/**
 * Each payer's USDC spent, the ledger's settled sum for it, and what the answers stated: all three equal; no row is
 * left verified or settle_unknown. A claim that timed out while the server was paused may have been written once
 * it resumed: a `pending` row, never verified, which is never settled (reconciliation marks it unsettled once its
 * authorization expires).
 */
async function expectEveryPayerChargedWhatWasServed(payers: { address: `0x${string}`; before: bigint }[]) {
  for (const payer of payers) {
    const spent = payer.before - (await usdcBalance(payer.address));
    const [ledger] = await readDatabase<{ settled: string; open: string }>(
      `select coalesce(sum(settled_amount) filter (where status = 'settled'), 0)::text as settled,
        count(*) filter (where status in ('verified', 'settle_unknown'))::text as open
        from payments where payer = $1`,
      [payer.address.toLowerCase()],
    );
    expect(ledger!.open, payer.address).toBe("0");
    expect(BigInt(ledger!.settled), payer.address).toBe(spent);
    expect(spent, payer.address).toBe(tally.paid.get(payer.address) ?? 0n);
  }
}

describe("the database stops or stalls under paid and prepaid traffic", { timeout: 240_000 }, () => {
  it("answers 503 while PostgreSQL is stopped for 10 s, loses no record, and serves again without a restart", async () => {
    const exactPayer = await fundedPayer(5_000_000n);
    const uptoPayer = await fundedPayer(5_000_000n);
    const buyer = await fundedPayer(5_000_000n);
    const code = (await buyPrepaidCode(buyer.key, undefined, "/prepaid/codes/auto", service.url)).code;
    const payers = [exactPayer, uptoPayer].map((payer) => ({ ...payer, before: 0n }));
    for (const payer of payers) payer.before = await usdcBalance(payer.address);
    expect(await exactCall(exactPayer, "before")).toBe(200);
    expect(await prepaidCall(code, "before")).toBe(200);

    // Streams under way when the database stops: they are charged at their end, while it is away.
    const prepaidClient = new OpenAI({ apiKey: code, baseURL: `${service.url}/v1`, maxRetries: 0 });
    const uptoClient = new OpenAI({
      apiKey: "x402",
      baseURL: `${service.url}/v1`,
      fetch: wrapFetchWithPayment(fetch, uptoPaymentClient(uptoPayer.key)),
      maxRetries: 0,
    });
    const streams = [
      longStream(
        prepaidClient,
        "prepaid stream 1",
        (usage) => (tally.prepaidTokens += usage.prepaid_charged_tokens as number),
      ),
      longStream(
        prepaidClient,
        "prepaid stream 2",
        (usage) => (tally.prepaidTokens += usage.prepaid_charged_tokens as number),
      ),
      longStream(uptoClient, "upto stream", (usage) => paidBy(uptoPayer.address, usage.cost as string)),
      longStream(payingOpenAI(exactPayer.key, `${service.url}/v1`), "exact stream", (usage) =>
        paidBy(exactPayer.address, usage.cost as string),
      ),
    ];
    for (const stream of streams) await expect.poll(stream.started, { timeout: 15_000 }).toBe(true);

    const pid = service.child.pid;
    await postgres.stop();
    const outageEnds = Date.now() + 10_000;
    let sawDown = false;
    for (let round = 0; Date.now() < outageEnds; round++) {
      const [exact, prepaid, state] = await Promise.all([
        exactCall(exactPayer, `during ${round}`),
        prepaidCall(code, `during ${round}`),
        health(),
      ]);
      expect([exact, prepaid]).toEqual([503, 503]);
      if (state.status === 503 && state.database.status === "down") sawDown = true;
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    expect(sawDown).toBe(true);
    // The streams ended whole while the database was away; their charges wait for it.
    expect(await Promise.all(streams.map((stream) => stream.done))).toEqual([true, true, true, true]);
    expect((await health()).database.pending_writes).toBeGreaterThan(0);

    postgres = await startLocalPostgres({ dataDir: postgres.dataDir, port: postgres.port });
    await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 250 }).toBe(200);
    await expect.poll(async () => (await health()).database.pending_writes, { timeout: 30_000 }).toBe(0);
    expect(await exactCall(exactPayer, "after")).toBe(200);
    expect(await prepaidCall(code, "after")).toBe(200);

    // The same process all along, and only 200s and 503s with the database's error, each with its body.
    expect(service.child.pid).toBe(pid);
    expect(service.child.exitCode).toBeNull();
    expect(new Set(tally.statuses)).toEqual(new Set([200, 503]));
    expect(new Set(tally.refusals.map((refusal) => refusal.code))).toEqual(new Set(["database_unavailable"]));
    await expectEveryPayerChargedWhatWasServed(payers);
    const [key] = await readDatabase<{ used: number; reserved: number }>(
      "select used_tokens::float8 as used, reserved_tokens::float8 as reserved from prepaid_keys",
    );
    expect(key).toEqual({ used: tally.prepaidTokens, reserved: 0 });
    expect(await readDatabase("select * from prepaid_reservations")).toEqual([]);
    const log = service.log.join("");
    expect(log).toMatch(/"event":"write_deferred"/);
    expect(log).toMatch(/"event":"write_recovered"/);
  });

  it("answers 503 within its timeout while PostgreSQL is paused, and serves again once it resumes", async () => {
    const payer = await fundedPayer(5_000_000n);
    const buyer = await fundedPayer(5_000_000n);
    const code = (await buyPrepaidCode(buyer.key, undefined, "/prepaid/codes/auto", service.url)).code;
    const payers = [{ ...payer, before: await usdcBalance(payer.address) }];
    const paused = postgresProcesses();
    signal(paused, "SIGSTOP");
    try {
      expect(await Promise.all([exactCall(payer, "paused"), prepaidCall(code, "paused")])).toEqual([503, 503]);
      expect((await health()).database.status).toBe("down");
    } finally {
      signal(paused, "SIGCONT");
    }
    await expect.poll(async () => (await health()).status, { timeout: 30_000, interval: 250 }).toBe(200);
    expect(await exactCall(payer, "resumed")).toBe(200);
    expect(await prepaidCall(code, "resumed")).toBe(200);
    expect(service.child.exitCode).toBeNull();
    expect(tally.refusals.every((refusal) => refusal.code === "database_unavailable")).toBe(true);
    await expectEveryPayerChargedWhatWasServed(payers);
  });
});

/** PostgreSQL's main process (its data directory's postmaster.pid) and its children: the sessions and workers. */
function postgresProcesses(): number[] {
  const main = Number(readFileSync(join(postgres.dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
  const children = readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        // The fields after the command's closing parenthesis: state, then the parent's pid.
        const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === main;
      } catch {
        return false;
      }
    })
    .map(Number);
  return [main, ...children];
}

function signal(pids: number[], name: NodeJS.Signals) {
  for (const pid of pids) process.kill(pid, name);
}
