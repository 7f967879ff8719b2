// npm run bench:attacks: what each shape of unauthenticated attack costs one app process, beside an ordinary call of
// the same length: 20 prepaid streams run through the app throughout and /health is asked every 10 ms, by honest
// callers in a process of their own (honest-callers-process.ts, from 127.0.0.3), and the app's resident memory is
// read every 20 ms. Printed per shape: the longest extra delay of a stream delta beyond the upstream's pacing, the
// slowest /health answer, the app's peak RSS over its RSS before, what the attack was answered and whether the
// facilitator's breaker stayed closed. Speed and memory are figures here, never assertions.
import { encodePaymentSignatureHeader, decodePaymentRequiredHeader } from "@x402/core/http";
import { spawn } from "node:child_process";
import { connect, type Socket } from "node:net";
import { createInterface } from "node:readline";
import { Agent, setGlobalDispatcher } from "undici";
import { buyBenchKey, benchPayerClient } from "./lib/buy-bench-key";
import { startBenchStack } from "./lib/bench-stack";
import { startFreshApp } from "./lib/fresh-app";
import { pidListeningOn, rssMb } from "./lib/process-memory";

// The attack's requests come from 127.0.0.2, its raw connections from 127.0.0.1, the honest callers from 127.0.0.3:
// a bound on one address holds the attacker, not the measurement.
setGlobalDispatcher(new Agent({ localAddress: "127.0.0.2" }));

type HonestFigures = { worstDelta: number; slowestHealth: number; streams: number; failures: string[] };
type HealthChecks = { checks: { facilitators: Record<string, { breaker: string }> } };

const DELTA_GAP_MS = 20;
const STREAMS = 20;
const stack = await startBenchStack({ deltaGapMs: DELTA_GAP_MS, deltas: 64 });
const chat = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "benchmark" }], max_tokens: 16 };

/** Posts `body` (a string, sent as it is) to the app; the status. */
async function post(url: string, body: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await response.body?.cancel();
  return response.status;
}

/** Runs `tasks` at most `concurrency` at a time; their results. */
async function pooled<T>(tasks: (() => Promise<T>)[], concurrency: number): Promise<T[]> {
  const results: T[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < tasks.length) {
        const index = next++;
        results[index] = await tasks[index]!();
      }
    }),
  );
  return results;
}

const tally = (statuses: number[]) =>
  Object.entries(
    statuses.reduce<Record<string, number>>(
      (counts, status) => ((counts[status] = (counts[status] ?? 0) + 1), counts),
      {},
    ),
  )
    .map(([status, count]) => `${count} x ${status}`)
    .join(", ");

/**
 * Raw connections from 127.0.0.1 that send `request` and then wait `holdMs`: reading nothing (`read` false: the
 * socket paused, so what the app does to it shows only in the app's figures), or reading (how many the app closed
 * is then counted).
 */
async function rawConnections(port: number, count: number, request: string, holdMs: number, read: boolean) {
  const sockets: Socket[] = [];
  let closedEarly = 0;
  for (let index = 0; index < count; index++) {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.once("close", () => closedEarly++);
    socket.once("connect", () => {
      socket.write(request);
      if (!read) socket.pause();
    });
    sockets.push(socket);
    if (index % 200 === 199) await new Promise((resolve) => setImmediate(resolve));
  }
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  const open = count - closedEarly;
  const statuses = read ? [] : await Promise.all(sockets.map(statusLine));
  for (const socket of sockets) socket.destroy();
  return read
    ? `${open} of ${count} still open after ${holdMs} ms`
    : `none read for ${holdMs} ms, then: ${tally(statuses.map((status) => status ?? 0))}`;
}

/** The status a paused socket was answered with, read now (0 when none came). */
function statusLine(socket: Socket): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0));
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.includes("\r\n")) done();
    });
    socket.once("close", done);
    setTimeout(done, 2000);
    socket.resume();
  });
}

try {
  const key = await buyBenchKey(stack.appUrl);
  // A process of its own, with streams cut after 2 s unread (the setting's default is 30). The quote limit and each
  // address's share of the provider at their defaults (the bench stack turns them off to measure throughput).
  const app = await startFreshApp(stack.appUrl, {
    STREAM_STALL_SECONDS: "2",
    RATE_LIMIT_QUOTE_RPM: "1200",
    PROVIDER_CALLS_PER_ADDRESS: "64",
  });
  const port = Number(new URL(app.url).port);
  const pid = pidListeningOn(port);
  if (pid === undefined) throw new Error("app server process not found");
  const chatUrl = `${app.url}/v1/chat/completions`;
  const streamBody = JSON.stringify({ ...chat, stream: true, max_tokens: 400 });
  // A payment of the first development payer, as the official client signs it; its signature swapped for junk.
  const quoted = await fetch(chatUrl, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(chat),
  });
  const required = decodePaymentRequiredHeader(quoted.headers.get("payment-required")!);
  await quoted.body?.cancel();
  const honest = await benchPayerClient().createPaymentPayload(required);
  const junkPayment = () => {
    const junk = `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(96))).toString("hex")}${"6492".repeat(16)}`;
    return encodePaymentSignatureHeader({ ...honest, payload: { ...honest.payload, signature: junk } });
  };
  const junkArray = `{"model":"vendor-a/gpt-6-luna","messages":[${"1,".repeat(12_000_000)}1]}`;
  const bigCount = JSON.stringify({ ...chat, messages: [{ role: "user", content: "harbor ".repeat(3_000_000) }] });

  const attacks: [string, () => Promise<string>][] = [
    [
      "an ordinary call: 20 quotes (402)",
      async () =>
        tally(
          await pooled(
            Array.from({ length: 20 }, () => () => post(chatUrl, JSON.stringify(chat))),
            4,
          ),
        ),
    ],
    [
      "24 MB of junk array elements, chat and Messages",
      async () => tally([await post(chatUrl, junkArray), await post(`${app.url}/v1/messages`, junkArray)]),
    ],
    [
      "20 junk ERC-6492 payments in a funded payer's name",
      async () =>
        tally(
          await pooled(
            Array.from(
              { length: 20 },
              () => () => post(chatUrl, JSON.stringify(chat), { "payment-signature": junkPayment() }),
            ),
            4,
          ),
        ),
    ],
    ["a 21 MB count_tokens", async () => tally([await post(`${app.url}/v1/messages/count_tokens`, bigCount)])],
    [
      "2,000 quotes with an undecodable payment header",
      async () =>
        tally(
          await pooled(
            Array.from({ length: 2000 }, () => () => post(chatUrl, JSON.stringify(chat), { "payment-signature": "x" })),
            16,
          ),
        ),
    ],
    [
      "256 prepaid streams never read",
      () =>
        rawConnections(
          port,
          256,
          `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(streamBody)}\r\n\r\n${streamBody}`,
          4_000,
          false,
        ),
    ],
    [
      "5,000 connections sending half a request",
      () => rawConnections(port, 5000, "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le", 3_000, true),
    ],
  ];

  console.log(
    `# What an attack costs one app process, beside ${STREAMS} prepaid streams (deltas every ${DELTA_GAP_MS} ms)\n`,
  );
  // Spoken to on its stdin, which its end closing also ends it: not under the guard, which keeps that pipe.
  const callers = spawn(
    process.execPath,
    ["--import", "tsx", "bench/lib/honest-callers-process.ts", app.url, key, String(DELTA_GAP_MS), String(STREAMS)],
    { stdio: ["pipe", "pipe", "inherit"] },
  );
  const lines = createInterface({ input: callers.stdout });
  const nextLine = () => new Promise<string>((resolve) => lines.once("line", resolve));
  await nextLine();
  for (const [name, attack] of attacks) {
    const before = rssMb(pid);
    let peak = before;
    const memory = setInterval(() => (peak = Math.max(peak, rssMb(pid))), 20);
    callers.stdin.write("start\n");
    // The streams under way before the attack starts.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const answered = await attack();
    const stopped = nextLine();
    callers.stdin.write("stop\n");
    const seen = JSON.parse(await stopped) as HonestFigures;
    clearInterval(memory);
    const breakers = ((await (await fetch(`${app.url}/health`)).json()) as HealthChecks).checks.facilitators;
    const closed = Object.values(breakers).every((facilitator) => facilitator.breaker === "closed");
    console.log(`${name}: ${answered}; facilitator breaker ${closed ? "closed" : "OPEN"}`);
    console.log(
      `  longest delta delay ${seen.worstDelta.toFixed(0)} ms; slowest /health ${seen.slowestHealth.toFixed(0)} ms; peak RSS +${(peak - before).toFixed(0)} MB over ${before.toFixed(0)} MB; ${seen.streams} streams served${seen.failures.length ? `, failures: ${seen.failures.join("; ")}` : ""}`,
    );
  }
  callers.stdin.end();
  await app.stop();
} finally {
  await stack.stopAll();
}
