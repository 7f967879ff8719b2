import { decodePaymentRequiredHeader } from "@x402/core/http";
import { wrapFetchWithPayment } from "@x402/fetch";
import { generatePrivateKey } from "viem/accounts";
import { connect, type Socket } from "node:net";
import OpenAI from "openai";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../cli/dev-stack/wait-for";
import { startExtraApp } from "./support/extra-app";
import { fundedPayer } from "./support/funded-payer";
import {
  buyPrepaidCode,
  chatBody,
  officialPayment,
  paymentClient,
  paymentRowsOf,
  quote,
  uptoPaymentClient,
} from "./support/payments";

/**
 * One instance under each shape of attack in turn, from 127.0.0.1, while honest callers on 127.0.0.2 keep going:
 * 20 prepaid streams read by the official openai SDK, /health asked every 20 ms, and after each attack a payer
 * paying with the official x402 client. Every honest call must be served whole, the facilitator's breaker stay
 * closed and no junk reach the ledger. How long the attacks held the event loop and how much memory they took are
 * figures of `npm run bench:attacks` (BENCHMARKS.md), not assertions here.
 */
/** Node's fetch sending from `localAddress` (127.0.0.0/8 all reach loopback), to play another host. */
function fetchFrom(localAddress: string, dispatcher = new Agent({ localAddress })) {
  const from = ((input: RequestInfo | URL, init?: RequestInit) =>
    fetch(input, { ...init, dispatcher } as RequestInit)) as typeof fetch;
  return Object.assign(from, { close: () => dispatcher.close() });
}
const honestFetch = fetchFrom("127.0.0.2");
const attackerFetch = fetchFrom("127.0.0.1");

const PROVIDER_PLACES = 64;
const HALF_REQUESTS = 5000;
const CONNECTIONS_PER_ADDRESS = 256;
const ROUTES = [
  "/v1/chat/completions",
  "/v1/messages",
  "/v1/messages/count_tokens",
  "/v1/responses",
  "/api/v1/images/generations",
  "/api/v1/images/image2image",
  "/jev",
  "/prepaid/codes",
  "/v1/embeddings",
  "/v1/free/chat/completions",
];

let app: Awaited<ReturnType<typeof startExtraApp>>;
let streamKey: string;
let attackerKey: string;
const port = () => Number(new URL(app.url).port);

beforeAll(async () => {
  app = await startExtraApp({
    // The honest streams run as fast as they can on one key; the attacker's streams are bounded by its address's
    // share of the provider, not by its key's own limit.
    RATE_LIMIT_KEY_RPM: "0",
    RATE_LIMIT_KEY_TPM: "0",
    RATE_LIMIT_KEY_CONCURRENT: "0",
    UPSTREAM_TIMEOUT_MS: "60000",
    STREAM_STALL_SECONDS: "2",
  });
  const buyer = await fundedPayer(50_000_000n);
  streamKey = (
    await buyPrepaidCode(buyer.key, { model: "vendor-a/gpt-6-luna", tokens: 1_000_000 }, "/prepaid/codes", app.url)
  ).code;
  attackerKey = (
    await buyPrepaidCode(buyer.key, { model: "vendor-a/gpt-6-luna", tokens: 100_000 }, "/prepaid/codes", app.url)
  ).code;
});
afterAll(async () => {
  await app?.stop();
  await Promise.all([honestFetch.close(), attackerFetch.close()]);
});

/** What honest callers met while `attack` ran: the streams' and /health's failures, and the attack's own result. */
async function underLoad<T>(attack: () => Promise<T>) {
  const openai = new OpenAI({ apiKey: streamKey, baseURL: `${app.url}/v1`, fetch: honestFetch, maxRetries: 0 });
  const failures: string[] = [];
  let streamsDone = 0;
  let running = true;
  const lanes = Array.from({ length: 20 }, async (_, lane) => {
    while (running) {
      try {
        const stream = await openai.chat.completions.create({
          model: "vendor-a/gpt-6-luna",
          messages: [{ role: "user", content: `lane ${lane} keeps streaming` }],
          max_tokens: 64,
          stream: true,
          stream_options: { include_usage: true },
        });
        let text = "";
        let usage = false;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.delta.content ?? "";
          usage ||= chunk.usage != null;
        }
        if (text.length === 0 || !usage) failures.push(`stream ${lane}: ended without text or usage`);
        streamsDone++;
      } catch (error) {
        failures.push(`stream ${lane}: ${(error as Error).message}`);
      }
    }
  });
  let slowestHealthMs = 0;
  const health = (async () => {
    while (running) {
      const started = performance.now();
      const answer = await honestFetch(`${app.url}/health`).catch((error: Error) => error);
      if (answer instanceof Error) failures.push(`/health: ${answer.message}`);
      else {
        await answer.body?.cancel();
        if (answer.status !== 200) failures.push(`/health: ${answer.status}`);
      }
      slowestHealthMs = Math.max(slowestHealthMs, performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  const result = await attack();
  running = false;
  await Promise.all([...lanes, health]);
  await expectBreakersClosed();
  await expectHonestPaymentServed();
  return { result, failures, streamsDone, slowestHealthMs };
}

async function expectBreakersClosed() {
  const health = (await (await honestFetch(`${app.url}/health`)).json()) as {
    checks: { facilitators: Record<string, { breaker: string; consecutive_failures: number }> };
  };
  for (const facilitator of Object.values(health.checks.facilitators)) {
    expect(facilitator).toMatchObject({ breaker: "closed", consecutive_failures: 0 });
  }
}

/** A new payer pays a chat call with the official x402 client from the honest address, and is served. */
async function expectHonestPaymentServed() {
  const quoted = await honestFetch(`${app.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(chatBody("price")),
  });
  await quoted.body?.cancel();
  const price = BigInt(decodePaymentRequiredHeader(quoted.headers.get("payment-required")!).accepts[0]!.amount);
  const payer = await fundedPayer(2n * price);
  const pay = wrapFetchWithPayment(honestFetch, paymentClient(payer.key));
  const answer = await pay(`${app.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(chatBody("an honest payer during an attack")),
  });
  expect(answer.status, await answer.clone().text()).toBe(200);
}

/** Posts `body` from the attacker's address; the status. */
async function attackerPost(path: string, body: string, headers: Record<string, string> = {}) {
  const answer = await attackerFetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body,
  });
  await answer.body?.cancel();
  return answer.status;
}

/**
 * Raw connections from `localAddress` that each send `request` and wait `holdMs`, reading nothing (paused: what was
 * answered is read afterwards) or reading (so that a connection the app closes is seen closed).
 */
async function rawConnections(localAddress: string, count: number, request: string, holdMs: number, read = false) {
  const sockets = Array.from({ length: count }, () => {
    const socket: Socket & { closedAt?: number } = connect({ port: port(), host: "127.0.0.1", localAddress });
    socket.on("error", () => undefined);
    socket.once("close", () => (socket.closedAt = performance.now()));
    socket.once("connect", () => {
      socket.write(request);
      if (!read) socket.pause();
    });
    return socket;
  });
  await new Promise((resolve) => setTimeout(resolve, holdMs));
  return sockets;
}

/** The status line of what a paused socket was sent, read now. */
function statusOf(socket: Socket): Promise<number | undefined> {
  return new Promise((resolve) => {
    let text = "";
    const done = () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1];
      resolve(status === undefined ? undefined : Number(status));
    };
    socket.on("data", (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (text.includes("\r\n")) done();
    });
    socket.once("close", done);
    // A loaded app may take seconds to take a connection off its queue and answer it.
    setTimeout(done, 15_000);
    socket.resume();
  });
}

const tally = (statuses: (number | undefined)[]) =>
  statuses.reduce<Record<string, number>>((counts, status) => {
    counts[String(status)] = (counts[String(status)] ?? 0) + 1;
    return counts;
  }, {});

describe("one instance under each attack in turn, honest callers served throughout", () => {
  it("a 24 MB body of junk array elements on every paid and free route: refused, nothing else disturbed", async () => {
    const junk = `{"model":"vendor-a/gpt-6-luna","messages":[${"1,".repeat(12_000_000)}1]}`;
    const { result, failures, streamsDone } = await underLoad(async () => {
      const statuses: Record<string, number> = {};
      for (const path of ROUTES) statuses[path] = await attackerPost(path, junk);
      return statuses;
    });
    expect(failures).toEqual([]);
    expect(streamsDone).toBeGreaterThan(20);
    // Each refused with a client error: too many members (400), too large for the route (413), or not its media type.
    for (const [path, status] of Object.entries(result)) expect([400, 413, 415], path).toContain(status);
  }, 120_000);

  it("20 junk ERC-6492 payments in a funded payer's name: refused locally, no row; the payer then pays upto", async () => {
    const body = chatBody("junk in another's name");
    const required = await quote("/v1/chat/completions", body, app.url);
    const victim = await fundedPayer(20n * BigInt(required.accepts[0]!.amount));
    const signed = JSON.parse(Buffer.from(await officialPayment(victim.key, required), "base64").toString("utf8")) as {
      payload: Record<string, unknown>;
    };
    const { result, failures } = await underLoad(() =>
      Promise.all(
        Array.from({ length: 20 }, () => {
          const junk = `0x${generatePrivateKey().slice(2).repeat(3)}${"6492".repeat(16)}`;
          const forged = { ...signed, payload: { ...signed.payload, signature: junk } };
          return attackerPost("/v1/chat/completions", JSON.stringify(body), {
            "payment-signature": Buffer.from(JSON.stringify(forged)).toString("base64"),
          });
        }),
      ),
    );
    expect(failures).toEqual([]);
    expect(tally(result)).toEqual({ 402: 20 });
    expect(paymentRowsOf(victim.address)).toEqual([]);
    // The payer named by the junk pays for a call with upto, as if nothing had happened.
    const pay = wrapFetchWithPayment(honestFetch, uptoPaymentClient(victim.key));
    const answer = await pay(`${app.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    expect(answer.status, await answer.clone().text()).toBe(200);
    await waitFor(async () => paymentRowsOf(victim.address)[0]?.status === "settled", {
      timeoutMs: 15_000,
      what: "the named payer's upto payment settled",
    });
    expect(paymentRowsOf(victim.address)).toHaveLength(1);
  }, 120_000);

  it("a 20 MB count_tokens: refused over the input cap, the counting yielding to the streams", async () => {
    const big = { model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "harbor ".repeat(3_000_000) }] };
    const { result, failures } = await underLoad(() =>
      attackerPost("/v1/messages/count_tokens", JSON.stringify({ ...big, max_tokens: 16 })),
    );
    expect(failures).toEqual([]);
    expect(result).toBe(400);
  }, 120_000);

  it("2,000 quotes carrying an undecodable payment header: counted as unpaid quotes, refused past the limit", async () => {
    const body = JSON.stringify(chatBody("junk header"));
    let seconds = 0;
    const { result, failures } = await underLoad(async () => {
      const statuses: number[] = [];
      const started = performance.now();
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          while (statuses.length < 2000) {
            const index = statuses.push(0) - 1;
            statuses[index] = await attackerPost("/v1/chat/completions", body, {
              "payment-signature": "x",
            });
          }
        }),
      );
      seconds = (performance.now() - started) / 1000;
      return statuses;
    });
    expect(failures).toEqual([]);
    const counts = tally(result);
    // RATE_LIMIT_QUOTE_RPM's default: 1,200 a minute from one address, the rest 429. The window slides: over a minute's
    // turn, the last minute's count weighs less as the seconds pass, so a loaded machine's slower flood may be
    // served up to 1,200 more per minute it lasted.
    expect(Object.keys(counts).sort()).toEqual(["402", "429"]);
    expect(counts[402]).toBeLessThanOrEqual(1200 + Math.ceil((1200 * seconds) / 60));
  }, 120_000);

  it("256 streams never read: the address holds at most its share of the provider, its places freed when it goes", async () => {
    const streamBody = JSON.stringify({
      model: "vendor-a/gpt-6-luna",
      messages: [{ role: "user", content: "[paysvc-dev-fault:stall-mid-stream] hold a connection" }],
      max_tokens: 64,
      stream: true,
    });
    const request = [
      "POST /v1/chat/completions HTTP/1.1",
      "Host: attacker",
      `Authorization: Bearer ${attackerKey}`,
      "Content-Type: application/json",
      `Content-Length: ${Buffer.byteLength(streamBody)}`,
      "",
      streamBody,
    ].join("\r\n");
    // From an address of their own: no other connection of the test's counts against that address's 256.
    const streamer = fetchFrom("127.0.0.3");
    let sockets: Socket[] = [];
    const { result, failures } = await underLoad(async () => {
      sockets = await rawConnections("127.0.0.3", 256, request, 3_000);
      return tally(await Promise.all(sockets.map(statusOf)));
    });
    for (const socket of sockets) socket.destroy();
    expect(failures).toEqual([]);
    expect(result).toEqual({ 200: PROVIDER_PLACES, 429: 256 - PROVIDER_PLACES });
    // Gone, its places are free again: the same address is served.
    await waitFor(
      async () => {
        const answer = await streamer(`${app.url}/v1/chat/completions`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: `Bearer ${attackerKey}` },
          body: JSON.stringify(chatBody("back")),
        });
        await answer.body?.cancel();
        return answer.status === 200;
      },
      { timeoutMs: 10_000, what: "the attacker's address served again once its streams were gone" },
    );
    await streamer.close();
  }, 120_000);

  it("5,000 connections sending half a request: all but the address's 256 closed as they are accepted", async () => {
    let sockets: (Socket & { closedAt?: number })[] = [];
    const open = () => sockets.filter((socket) => socket.closedAt === undefined).length;
    const { failures } = await underLoad(async () => {
      const half = "POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Le";
      sockets = await rawConnections("127.0.0.4", HALF_REQUESTS, half, 3_000, true);
      // The kernel completes connections before the app accepts them: on a loaded machine some still wait in its
      // queue after 3 s, and each is closed as soon as the app takes it.
      await waitFor(async () => open() <= CONNECTIONS_PER_ADDRESS, {
        timeoutMs: 60_000,
        what: `at most ${CONNECTIONS_PER_ADDRESS} of the half requests left open`,
      });
    });
    const left = open();
    for (const socket of sockets) socket.destroy();
    expect(failures).toEqual([]);
    expect(left).toBeLessThanOrEqual(CONNECTIONS_PER_ADDRESS);
    expect(left).toBeGreaterThan(0);
  }, 120_000);
});
