// The benchmark's section on paid calls against a facilitator as slow as a real chain's: a proxy in front of the
// embedded facilitator holds each /verify and /settle for a set time (a real verify takes 200-500 ms, a real
// settlement waits for a confirmation, about 2 s on Base and Polygon), and two more app servers pay through it, one
// per SETTLEMENT_ORDER. A paid stream's time to its first byte and a whole answer's total are measured beside the same
// calls billed to a prepaid key in the same run: what a caller waits for the payment on a real chain.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { freePort, startNextApp } from "../../cli/dev-stack/next-app";
import { environmentOfServer } from "./process-memory";
import { serverTimings } from "./server-timing";
import { ms, percentile } from "./stats";

/** The facilitator's delays unless BENCH_VERIFY_DELAY_MS and BENCH_SETTLE_DELAY_MS say otherwise. */
export const SLOW_VERIFY_MS = Number(process.env.BENCH_VERIFY_DELAY_MS ?? 300);
export const SLOW_SETTLE_MS = Number(process.env.BENCH_SETTLE_DELAY_MS ?? 1500);
/** The targets' allowance for the gateway's own work beyond the facilitator's and the upstream's time. */
const ALLOWANCE_MS = 50;

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A facilitator in front of `target` that answers /verify and /settle only after `delays` (ms), others at once. */
async function startDelayingFacilitator(target: string, delays: Record<string, number>) {
  const server = createServer(async (request, response) => {
    const path = request.url ?? "/";
    const body = request.method === "POST" ? await bodyOf(request) : undefined;
    await new Promise((resolve) => setTimeout(resolve, delays[path] ?? 0));
    const answer = await fetch(`${target}${path}`, {
      method: request.method,
      // The app's credentials for the facilitator behind, passed on.
      headers: {
        ...(body && { "content-type": "application/json" }),
        ...(request.headers.authorization && { authorization: request.headers.authorization }),
      },
      body: body && new Uint8Array(body),
    });
    response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Order = "overlap" | "strict";

/** `rounds` paid and prepaid calls of each kind through an app per settlement order, paying through the slow facilitator. */
export async function slowFacilitatorSection(options: {
  stack: { appUrl: string; facilitatorUrl: string };
  client: x402Client;
  key: string;
  rounds: number;
}): Promise<string[]> {
  const { stack, client, key, rounds } = options;
  const facilitator = await startDelayingFacilitator(stack.facilitatorUrl, {
    "/verify": SLOW_VERIFY_MS,
    "/settle": SLOW_SETTLE_MS,
  });
  // The stack's app server's own environment (its database, chain, upstream), but for the facilitator and the order.
  const env = { ...environmentOfServer(stack.appUrl), FACILITATOR_URL: facilitator.url } as Record<string, string>;
  const start = async (order: Order) =>
    startNextApp({ host: "127.0.0.1", port: await freePort(), env: { ...env, SETTLEMENT_ORDER: order } });
  const apps = { overlap: await start("overlap"), strict: await start("strict") };
  try {
    const runs = { overlap: emptyRuns(), strict: emptyRuns() };
    for (let round = 0; round < rounds; round++) {
      for (const order of ["overlap", "strict"] as const) {
        const messages = [{ role: "user", content: `slow chain ${order} ${round}` }];
        const stream = { model: "vendor-a/gpt-6-luna", messages, max_tokens: 16, stream: true };
        const whole = { model: "vendor-a/gpt-6-luna", messages, max_tokens: 16 };
        const url = `${apps[order].url}/v1/chat/completions`;
        const run = runs[order];
        run.paidStream.push(
          (await timed(url, stream, { "PAYMENT-SIGNATURE": await signed(url, client, stream) })).first,
        );
        run.prepaidStream.push((await timed(url, stream, { authorization: `Bearer ${key}` })).first);
        const paid = await timed(url, whole, { "PAYMENT-SIGNATURE": await signed(url, client, whole) });
        run.paidWhole.push(paid.total);
        // Beyond what the answer waited for: the longer of verify and the upstream (overlap), then settle.
        const { verify = 0, upstream = 0, settle = 0 } = paid.timings;
        run.wholeBeyond.push(paid.total - Math.max(verify, upstream) - settle);
        run.prepaidWhole.push((await timed(url, whole, { authorization: `Bearer ${key}` })).total);
      }
    }
    return [
      `a proxy holds each /verify ${SLOW_VERIFY_MS} ms and each /settle ${SLOW_SETTLE_MS} ms; ${rounds} rounds, each order in turn (p50s)`,
      ...(["overlap", "strict"] as const).flatMap((order) => orderLines(order, runs[order])),
      ...targetLines(runs.overlap),
    ];
  } finally {
    await Promise.all([apps.overlap.stop(), apps.strict.stop()]);
    await facilitator.stop();
  }
}

const emptyRuns = () => ({
  paidStream: [] as number[],
  prepaidStream: [] as number[],
  paidWhole: [] as number[],
  prepaidWhole: [] as number[],
  /** Each paid whole answer's total less the longer of its verify and upstream and its settle (Server-Timing). */
  wholeBeyond: [] as number[],
});
type Runs = ReturnType<typeof emptyRuns>;
const p50 = (values: number[]) => percentile(values, 50);

function orderLines(order: Order, run: Runs): string[] {
  const how =
    order === "overlap"
      ? "verify beside the upstream, a stream passed on while it settles"
      : "verify, upstream, settle, then the answer";
  const stream = [p50(run.paidStream), p50(run.prepaidStream)] as const;
  const whole = [p50(run.paidWhole), p50(run.prepaidWhole)] as const;
  return [
    `SETTLEMENT_ORDER=${order} (${how}):`,
    `  stream, time to first byte: paid ${ms(stream[0])}, prepaid ${ms(stream[1])}; paid beyond prepaid ${ms(stream[0] - stream[1])}`,
    `  whole answer, total: paid ${ms(whole[0])}, prepaid ${ms(whole[1])}; paid beyond prepaid ${ms(whole[0] - whole[1])}`,
  ];
}

/**
 * The targets, for overlap: a stream's first byte within the verify delay of a prepaid one's; a whole answer within
 * the longer of verify and the upstream, then settle, as the app measured them (the facilitator's own work and the
 * proxy's hops included), plus the allowance.
 */
function targetLines(run: Runs): string[] {
  const verdict = (met: boolean) => (met ? "met" : "NOT met");
  const firstByteLimit = p50(run.prepaidStream) + SLOW_VERIFY_MS + ALLOWANCE_MS;
  const beyond = p50(run.wholeBeyond);
  return [
    `target: overlap stream's first byte <= prepaid's + verify + ${ALLOWANCE_MS} ms = ${ms(firstByteLimit)}: ${ms(p50(run.paidStream))}, ${verdict(p50(run.paidStream) <= firstByteLimit)}`,
    `target: overlap whole answer <= max(verify, upstream) + settle + ${ALLOWANCE_MS} ms (Server-Timing's verify and settle): ${ms(beyond)} beyond them, ${verdict(beyond <= ALLOWANCE_MS)}`,
  ];
}

/** Milliseconds from sending the request to its first body byte, and to its end. */
async function timed(url: string, body: object, headers: Record<string, string>) {
  const begin = performance.now();
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  if (response.status !== 200) throw new Error(`a slow-facilitator call answered ${response.status}`);
  const reader = response.body!.getReader();
  let first: number | undefined;
  for (;;) {
    const { done } = await reader.read();
    first ??= performance.now() - begin;
    if (done) break;
  }
  return { first: first!, total: performance.now() - begin, timings: serverTimings(response) };
}

/** A payment signed beforehand (the client's work is not counted), for the body's quote. */
async function signed(url: string, client: x402Client, body: object): Promise<string> {
  const challenge = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  await challenge.text();
  const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required")!);
  const exact = { ...required, accepts: required.accepts.filter((entry) => entry.scheme === "exact") };
  return encodePaymentSignatureHeader(await client.createPaymentPayload(exact));
}
