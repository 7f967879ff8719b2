// The benchmark's section on paid calls against a facilitator as slow as a real chain's: a proxy in front of the
// embedded facilitator holds each /verify and /settle for a set time (a real verify takes 200-500 ms, a real
// settlement waits for a confirmation, about 2 s on Base and Polygon), and a second app server pays through it. A
// paid stream's time to its first byte and a whole answer's total are measured beside the same calls billed to a
// prepaid key in the same run: what a caller waits for the payment on a real chain.
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import type { x402Client } from "@x402/core/client";
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from "@x402/core/http";
import { freePort, startNextApp } from "../../cli/dev-stack/next-app";
import { environmentOfServer } from "./process-memory";
import { ms, percentile } from "./stats";

export const SLOW_VERIFY_MS = 300;
export const SLOW_SETTLE_MS = 1500;

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
      headers: body ? { "content-type": "application/json" } : {},
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

/** `rounds` paid and prepaid calls of each kind through an app paying through the slow facilitator. */
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
  // The stack's app server's own environment (its database, chain, upstream), but for the facilitator.
  const env = { ...environmentOfServer(stack.appUrl), FACILITATOR_URL: facilitator.url } as Record<string, string>;
  const app = await startNextApp({ host: "127.0.0.1", port: await freePort(), env });
  try {
    /** Milliseconds from sending the request to its first body byte, and to its end. */
    const timed = async (body: object, headers: Record<string, string>) => {
      const begin = performance.now();
      const response = await fetch(`${app.url}/v1/chat/completions`, {
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
      return { first: first!, total: performance.now() - begin };
    };
    /** A payment signed beforehand (the client's work is not counted), for the body's quote. */
    const signed = async (body: object) => {
      const challenge = await fetch(`${app.url}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify(body),
      });
      await challenge.text();
      const required = decodePaymentRequiredHeader(challenge.headers.get("payment-required")!);
      const exact = { ...required, accepts: required.accepts.filter((entry) => entry.scheme === "exact") };
      return encodePaymentSignatureHeader(await client.createPaymentPayload(exact));
    };
    const runs = { paidStream: [] as number[], prepaidStream: [] as number[], paidWhole: [] as number[] };
    const prepaidWhole: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const messages = [{ role: "user", content: `slow chain ${round}` }];
      const stream = { model: "vendor-a/gpt-6-luna", messages, max_tokens: 16, stream: true };
      const whole = { model: "vendor-a/gpt-6-luna", messages, max_tokens: 16 };
      runs.paidStream.push((await timed(stream, { "PAYMENT-SIGNATURE": await signed(stream) })).first);
      runs.prepaidStream.push((await timed(stream, { authorization: `Bearer ${key}` })).first);
      runs.paidWhole.push((await timed(whole, { "PAYMENT-SIGNATURE": await signed(whole) })).total);
      prepaidWhole.push((await timed(whole, { authorization: `Bearer ${key}` })).total);
    }
    const p50 = (values: number[]) => percentile(values, 50);
    return [
      `a proxy holds each /verify ${SLOW_VERIFY_MS} ms and each /settle ${SLOW_SETTLE_MS} ms; settlement order: strict (verify, upstream, settle, then the answer)`,
      `stream, time to first byte p50: paid ${ms(p50(runs.paidStream))}, prepaid ${ms(p50(runs.prepaidStream))}; paid beyond prepaid ${ms(p50(runs.paidStream) - p50(runs.prepaidStream))}`,
      `whole answer, total p50: paid ${ms(p50(runs.paidWhole))}, prepaid ${ms(p50(prepaidWhole))}; paid beyond prepaid ${ms(p50(runs.paidWhole) - p50(prepaidWhole))}`,
    ];
  } finally {
    await app.stop();
    await facilitator.stop();
  }
}
