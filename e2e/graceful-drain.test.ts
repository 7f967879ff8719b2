import { Agent, request as httpRequest } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { wrapFetchWithPayment } from "@x402/fetch";
import Database from "better-sqlite3";
import OpenAI from "openai";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../cli/dev-stack/next-app";
import { startLocalUpstream, type LocalUpstream } from "../cli/dev-stack/local-upstream";
import { decimalToAtomic } from "../server/core/money";
import { fundedPayer } from "./support/funded-payer";
import { startService, stopService } from "./support/paysvc-service";
import {
  buyPrepaidCode,
  payingOpenAI,
  quote,
  stack,
  stackFacilitator,
  uptoPaymentClient,
  usdcBalance,
} from "./support/payments";

const directory = mkdtempSync(join(tmpdir(), "paysvc-drain-"));
const DELTAS = 40;
const DELTA_MS = 100;
let provider: LocalUpstream;

beforeAll(async () => {
  // A slow provider: each streamed answer takes DELTAS x DELTA_MS, about 4 s.
  provider = await startLocalUpstream({ port: 0, streamDeltas: DELTAS, deltaDelayMs: DELTA_MS });
});
afterAll(async () => {
  await provider?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** A production deployment of its own (its pay-to and database), on the shared chain and facilitator. */
async function deployment(graceSeconds: number) {
  const databasePath = join(directory, `drain-${graceSeconds}.sqlite`);
  const env = {
    NETWORK: "eip155:137",
    PAY_TO: privateKeyToAccount(generatePrivateKey()).address,
    ...stackFacilitator(),
    // The chain the app reads payers' funds on (what an upto payment or an exact stream may owe at once).
    CHAIN_RPC_URL: stack().chainRpcUrl,
    UPSTREAM_BASE_URL: `${provider.url}/v1`,
    DATABASE_URL: `file:${databasePath}`,
    PORT: String(await freePort()),
    HOST: "127.0.0.1",
    RECONCILE_INTERVAL_SECONDS: "0",
    SHUTDOWN_GRACE_SECONDS: String(graceSeconds),
  };
  return { env, databasePath, service: await startService(env) };
}

type Kind = "exact" | "upto" | "prepaid";
interface Stream {
  kind: Kind;
  chunks: { choices: { delta?: { content?: string } }[]; usage?: Record<string, unknown> | null }[];
  done: Promise<{ finished: boolean; error?: { code?: string } }>;
  payer?: `0x${string}`;
  quoted?: bigint;
  before?: bigint;
}

const body = (label: string) => ({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content: `drain ${label}` }],
  max_tokens: 400,
  stream: true,
  stream_options: { include_usage: true },
});

type Payer = Awaited<ReturnType<typeof fundedPayer>>;

/** Starts one paid stream of `kind`: exact and upto each from a payer of its own, prepaid on `code`. */
async function startStream(kind: Kind, index: number, url: string, code: string, payer?: Payer): Promise<Stream> {
  const request = body(`${kind} ${index}`);
  let client: OpenAI;
  const stream: Stream = { kind, chunks: [], done: Promise.resolve({ finished: false }) };
  if (kind === "prepaid") {
    client = new OpenAI({ apiKey: code, baseURL: `${url}/v1`, maxRetries: 0 });
  } else {
    if (!payer) throw new Error(`a ${kind} stream needs a payer`);
    stream.payer = payer.address;
    stream.quoted = BigInt((await quote("/v1/chat/completions", request, url)).accepts[0]!.amount);
    stream.before = await usdcBalance(payer.address);
    client =
      kind === "exact"
        ? payingOpenAI(payer.key, `${url}/v1`)
        : new OpenAI({
            apiKey: "x402",
            baseURL: `${url}/v1`,
            fetch: wrapFetchWithPayment(fetch, uptoPaymentClient(payer.key)),
            maxRetries: 0,
          });
  }
  const running = client.chat.completions.stream(request as never);
  running.on("chunk", (chunk) => stream.chunks.push(chunk as never));
  stream.done = running.finalChatCompletion().then(
    () => ({ finished: true }),
    (error: { error?: { code?: string }; code?: string }) => ({ finished: false, error: { code: error.code } }),
  );
  return stream;
}

/** A request on a connection that was opened before the signal (a load balancer's kept connection). */
function onKeptConnection(agent: Agent, url: string, path: string, method = "GET") {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
    const target = new URL(path, url);
    const outgoing = httpRequest(
      target,
      { agent, method, headers: { "content-type": "application/json" } },
      (answer) => {
        let text = "";
        answer.on("data", (chunk: Buffer) => (text += chunk.toString()));
        answer.on("end", () => resolve({ status: answer.statusCode!, headers: answer.headers, body: text }));
      },
    );
    outgoing.on("error", reject);
    outgoing.end(method === "POST" ? JSON.stringify({ ...body("late"), stream: false }) : undefined);
  });
}

const content = (stream: Stream) => stream.chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");

/** Eight paid streams (4 exact, 2 upto, 2 prepaid) under way, each past its first event. */
async function eightStreams(url: string, code: string) {
  const kinds: Kind[] = ["exact", "exact", "exact", "exact", "upto", "upto", "prepaid", "prepaid"];
  // Funded one after the other: the funds come from one account, whose transactions go out in nonce order.
  const payers: (Payer | undefined)[] = [];
  for (const kind of kinds) payers.push(kind === "prepaid" ? undefined : await fundedPayer(2_000_000n));
  const streams = await Promise.all(kinds.map((kind, index) => startStream(kind, index, url, code, payers[index])));
  for (const stream of streams) {
    await expect.poll(() => stream.chunks.length, { timeout: 10_000 }).toBeGreaterThan(0);
  }
  return streams;
}

function rows(databasePath: string) {
  const database = new Database(databasePath, { readonly: true });
  try {
    return {
      payments: database.prepare("select * from payments").all() as Record<string, unknown>[],
      keys: database.prepare("select * from prepaid_keys").all() as Record<string, unknown>[],
    };
  } finally {
    database.close();
  }
}

describe("SIGTERM drains: what is under way finishes, nothing new is taken", { timeout: 180_000 }, () => {
  it("lets 8 paid streams finish whole, each charged what it would have been, and exits 0 by itself", async () => {
    const { service, databasePath } = await deployment(30);
    const code = (await buyPrepaidCode(stack().payers[5]!.privateKey, undefined, "/prepaid/codes/auto", service.url))
      .code;
    const health = new Agent({ keepAlive: true, maxSockets: 1 });
    const late = new Agent({ keepAlive: true, maxSockets: 1 });
    // Two kept connections, opened before the signal.
    expect((await onKeptConnection(health, service.url, "/health")).status).toBe(200);
    expect((await onKeptConnection(late, service.url, "/v1/models")).status).toBe(200);
    const streams = await eightStreams(service.url, code);
    const signalled = Date.now();
    const exited = stopService(service);

    // The signal reaches the app through `paysvc start`: its health says draining as soon as it has.
    let draining = await onKeptConnection(health, service.url, "/health");
    while (draining.status === 200) draining = await onKeptConnection(health, service.url, "/health");
    expect(draining.status).toBe(503);
    expect(draining.headers).toMatchObject({ connection: "close" });
    expect(JSON.parse(draining.body)).toMatchObject({ status: "draining" });
    const refused = await onKeptConnection(late, service.url, "/v1/chat/completions", "POST");
    expect(refused.status).toBe(503);
    expect(refused.headers).toMatchObject({ "retry-after": "5", connection: "close" });
    expect(JSON.parse(refused.body).error.code).toBe("shutting_down");

    const results = await Promise.all(streams.map((stream) => stream.done));
    expect(results).toEqual(streams.map(() => ({ finished: true })));
    for (const stream of streams) expect(content(stream)).toContain(`drain ${stream.kind}`);
    expect(await exited).toBe(0);
    expect(Date.now() - signalled).toBeLessThan(30_000);

    // Each charged as without the signal: exact its quote, upto and prepaid the usage their answer states.
    for (const stream of streams.filter((entry) => entry.payer)) {
      const paid = stream.before! - (await usdcBalance(stream.payer!));
      const usage = stream.chunks.at(-1)!.usage as { cost: string };
      expect(paid, stream.kind).toBe(stream.kind === "exact" ? stream.quoted! : decimalToAtomic(usage.cost, 6));
    }
    const { payments, keys } = rows(databasePath);
    expect(payments.map((row) => row.status)).toEqual(payments.map(() => "settled"));
    const charged = streams
      .filter((stream) => stream.kind === "prepaid")
      .map((stream) => (stream.chunks.at(-1)!.usage as { prepaid_charged_tokens: number }).prepaid_charged_tokens);
    expect(keys).toEqual([expect.objectContaining({ used_tokens: charged[0]! + charged[1]!, reserved_tokens: 0 })]);
    expect(service.log.join("")).toMatch(/"event":"drained"/);
  });

  it("cuts the streams still running when the grace runs out: an error event, each billed what it passed on", async () => {
    const { service, databasePath } = await deployment(1);
    const code = (await buyPrepaidCode(stack().payers[5]!.privateKey, undefined, "/prepaid/codes/auto", service.url))
      .code;
    const streams = await eightStreams(service.url, code);
    expect(await stopService(service)).toBe(0);
    const results = await Promise.all(streams.map((stream) => stream.done));
    expect(results).toEqual(streams.map(() => ({ finished: false, error: { code: "shutting_down" } })));

    const { payments, keys } = rows(databasePath);
    for (const stream of streams.filter((entry) => entry.payer)) {
      const paid = stream.before! - (await usdcBalance(stream.payer!));
      const row = payments.find((entry) => entry.payer === stream.payer!.toLowerCase())!;
      expect(row.status, stream.kind).toBe("settled");
      if (stream.kind === "exact") expect(paid).toBe(stream.quoted!);
      else {
        // upto: the output passed on, which is less than the quote's maximum.
        expect(paid).toBe(BigInt(row.settled_amount as string));
        expect(paid).toBeLessThan(stream.quoted!);
      }
    }
    // The key: what the two cut streams passed on, nothing reserved any more.
    expect(keys).toHaveLength(1);
    expect(keys[0]!.reserved_tokens).toBe(0);
    expect(keys[0]!.used_tokens as number).toBeGreaterThan(0);
    expect(service.log.join("")).toMatch(/"event":"drained".*"streams_cut":true/);
  });
});
