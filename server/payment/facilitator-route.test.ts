import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PaymentPayload } from "@x402/core/types";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { getNetwork } from "../../networks";
import { FacilitatorUnavailableError } from "./facilitator-answers";
import { FacilitatorCallError } from "./facilitator-route";
import { PaymentGateway } from "./payment-gateway";

const network = getNetwork("eip155:137");
const payTo = "0x2546BcD3c84621e976D8185a91A922aE77ECEc30";

/** How the fake facilitator answers /verify (and /settle) from now on: a status and a JSON body. */
let answer: { status: number; body: unknown };
let verifies = 0;

// A facilitator over real HTTP, as the official client meets one: /supported lists exact on the network; /verify
// and /settle answer whatever the test sets.
const facilitator: Server = createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { "content-type": "application/json" });
      response.end(JSON.stringify(body));
    };
    if (request.url === "/supported") {
      return reply(200, {
        kinds: [{ x402Version: 2, scheme: "exact", network: network.id }],
        extensions: [],
        signers: {},
      });
    }
    verifies += 1;
    reply(answer.status, answer.body);
  });
});

let url: string;
beforeAll(async () => {
  await new Promise<void>((resolve) => facilitator.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(facilitator.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => facilitator.close(() => resolve())));

const THRESHOLD = 2;
let gateway: PaymentGateway;
beforeEach(() => {
  verifies = 0;
  gateway = new PaymentGateway({
    network,
    payTo,
    facilitators: [{ name: "only", url }],
    facilitatorTimeoutMs: 5_000,
    facilitatorBreaker: { failureThreshold: THRESHOLD, cooldownMs: 60_000 },
    paymentTimeoutSeconds: 300,
  });
});

/** Asks the gateway to verify a payment signed for its own requirements, `times` times; what each call came to. */
async function verifyTimes(times: number) {
  const requirements = await gateway.requirementsFor(1000n);
  const payload = { x402Version: 2, accepted: requirements, payload: {} } as unknown as PaymentPayload;
  const outcomes: unknown[] = [];
  for (let index = 0; index < times; index++) {
    outcomes.push(await gateway.verify(payload, requirements).catch((error: unknown) => error));
  }
  return outcomes;
}

const breakerOf = () => {
  const { breaker } = gateway.routes[0]!;
  return { state: breaker.state(), failures: breaker.consecutiveFailures };
};

describe("a facilitator's breaker counts failures, not refusals", () => {
  it("is not opened by 429s: each call is answered unavailable, and the facilitator is still asked", async () => {
    answer = { status: 429, body: { error: "too many requests" } };
    const outcomes = await verifyTimes(THRESHOLD * 3);
    for (const outcome of outcomes) expect(outcome).toBeInstanceOf(FacilitatorUnavailableError);
    expect(verifies).toBe(THRESHOLD * 3);
    expect(breakerOf()).toEqual({ state: "closed", failures: 0 });
  });

  it("is not opened by isValid: false, whether answered 200 or 400", async () => {
    answer = { status: 200, body: { isValid: false, invalidReason: "invalid_exact_evm_payload_signature" } };
    for (const outcome of await verifyTimes(THRESHOLD * 2)) expect(outcome).toMatchObject({ isValid: false });
    answer = { status: 400, body: { isValid: false, invalidReason: "insufficient_funds" } };
    for (const outcome of await verifyTimes(THRESHOLD * 2)) {
      expect(outcome).toMatchObject({ isValid: false, invalidReason: "insufficient_funds", facilitator: "only" });
    }
    expect(verifies).toBe(THRESHOLD * 4);
    expect(breakerOf()).toEqual({ state: "closed", failures: 0 });
  });

  it("is not opened by a 4xx without a verdict (a payload it could not read), but is by a refused credential", async () => {
    answer = { status: 400, body: { error: "invalid payload: signature is not hex" } };
    for (const outcome of await verifyTimes(THRESHOLD * 3)) expect(outcome).toBeInstanceOf(FacilitatorUnavailableError);
    answer = { status: 422, body: { error: "unprocessable" } };
    await verifyTimes(THRESHOLD);
    expect(verifies).toBe(THRESHOLD * 4);
    expect(breakerOf()).toEqual({ state: "closed", failures: 0 });
    // 401: the gateway's own credentials are refused, which every payment meets: that is a failure.
    answer = { status: 401, body: { error: "unauthorized" } };
    await verifyTimes(THRESHOLD + 1);
    expect(breakerOf()).toEqual({ state: "open", failures: THRESHOLD });
  });

  it("is opened by failures (500s), after which the facilitator is not asked", async () => {
    answer = { status: 500, body: { error: "internal error" } };
    await verifyTimes(THRESHOLD + 2);
    expect(verifies).toBe(THRESHOLD);
    expect(breakerOf()).toEqual({ state: "open", failures: THRESHOLD });
  });

  it("lets a 429 free the trial of a half-open breaker without opening it again", async () => {
    const route = gateway.routes[0]!;
    const requirements = await gateway.requirementsFor(1000n);
    answer = { status: 500, body: { error: "internal error" } };
    await verifyTimes(THRESHOLD);
    const later = Date.now() + 60_001;
    expect(route.breaker.state(later)).toBe("half_open");
    expect(route.breaker.tryAcquire(later)).toBe(true);
    answer = { status: 429, body: { error: "too many requests" } };
    const payload = { x402Version: 2, accepted: requirements, payload: {} } as unknown as PaymentPayload;
    const error = (await route
      .verify(payload, requirements)
      .catch((thrown: unknown) => thrown)) as FacilitatorCallError;
    expect(error).toBeInstanceOf(FacilitatorCallError);
    expect(error).toMatchObject({ status: 429, rateLimited: true, didNothing: true });
    route.failed(error);
    // The trial is free again and the breaker not opened for another cooldown: the next caller may try it.
    expect(route.breaker.tryAcquire(later)).toBe(true);
    expect(route.breaker.consecutiveFailures).toBe(THRESHOLD);
  });
});
