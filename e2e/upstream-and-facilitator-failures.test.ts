import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { balances, chatBody, ledgerRow, officialPayment, postJson, quote, stack } from "./support/payments";

const PATH = "/v1/chat/completions";
const payer = () => stack().payers[2]!;

/** Pays for `body` with the official client and sends it; the payment must not be settled. */
async function payAndSend(body: unknown, base = stack().appUrl) {
  const signature = await officialPayment(payer().privateKey, await quote(PATH, body, base));
  const before = await balances(payer().address);
  const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, base);
  const json = await response.json();
  expect(response.headers.get("payment-response")).toBeNull();
  expect(await balances(payer().address)).toEqual(before);
  return { response, json, signature };
}

describe("an upstream failure is a 502 and the payer keeps the money", () => {
  it("upstream answers with an error status", async () => {
    const { response, json, signature } = await payAndSend(chatBody("[paysvc-dev-fault:http-error]"));
    expect(response.status).toBe(502);
    expect(json.error.code).toBe("upstream_error");
    expect(json.error.message).toMatch(/not settled/);
    expect(ledgerRow(signature)).toMatchObject({
      status: "not_charged",
      failure_reason: "upstream_status",
      transaction: null,
    });
  });

  it("upstream never answers (timeout)", async () => {
    const { response, json } = await payAndSend(chatBody("[paysvc-dev-fault:hang]"));
    expect(response.status).toBe(502);
    expect(json.error.message).toMatch(/did not answer within 3000 ms/);
  });

  it("upstream fails before the first streamed event", async () => {
    const { response } = await payAndSend(chatBody("[paysvc-dev-fault:http-error]", { stream: true }));
    expect(response.status).toBe(502);
  });

  it("upstream answers status 200 with an error object instead of a completion", async () => {
    const { response, json, signature } = await payAndSend(chatBody("[paysvc-dev-fault:error-in-200]"));
    expect(response.status).toBe(502);
    expect(json.error.message).toMatch(/answered 200 with an error.*not settled/);
    expect(ledgerRow(signature)).toMatchObject({ status: "not_charged", failure_reason: "upstream_status" });
  });

  it("upstream's stream sends a comment, then an error as its first event", async () => {
    const { response, json } = await payAndSend(chatBody("[paysvc-dev-fault:error-in-200]", { stream: true }));
    expect(response.status).toBe(502);
    expect(json.error.message).toMatch(/stream began with an error/);
  });

  describe("upstream unreachable (connection refused)", () => {
    let app: Awaited<ReturnType<typeof startExtraApp>>;
    beforeAll(async () => {
      app = await startExtraApp({ UPSTREAM_BASE_URL: "http://127.0.0.1:CLOSED_PORT/v1" });
    });
    afterAll(() => app?.stop());

    it("answers 502 and settles nothing", async () => {
      const { response, json } = await payAndSend(chatBody("nobody home"), app.url);
      expect(response.status).toBe(502);
      expect(json.error.message).toMatch(/unreachable/);
    });

    it("reports the upstream down in /health: 200 degraded naming it, no error text", async () => {
      const response = await fetch(`${app.url}/health`);
      expect(response.status).toBe(200);
      const health = await response.json();
      expect(health.status).toBe("degraded");
      expect(health.down).toEqual(["provider upstream"]);
      expect(health.checks.providers.upstream).not.toHaveProperty("error");
      expect(health.checks.upstream.status).toBe("down");
      expect(health.checks.facilitator.status).toBe("up");
      expect(health.checks.database.status).toBe("up");
    });
  });

  describe("facilitator unreachable", () => {
    let app: Awaited<ReturnType<typeof startExtraApp>>;
    beforeAll(async () => {
      app = await startExtraApp({ FACILITATOR_URL: "http://127.0.0.1:CLOSED_PORT" });
    });
    afterAll(() => app?.stop());

    it("quotes (EVM exact terms need no facilitator) and answers a signed payment 503 with Retry-After", async () => {
      const body = chatBody("no facilitator");
      const quoteResponse = await postJson(PATH, body, {}, app.url);
      expect(quoteResponse.status).toBe(402);
      // A payment signed for this deployment's own quote: paying waits for a facilitator.
      const signature = await officialPayment(payer().privateKey, await quote(PATH, body, app.url));
      const before = await balances(payer().address);
      const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature }, app.url);
      expect(response.status).toBe(503);
      expect(response.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(await balances(payer().address)).toEqual(before);
    });

    it("reports the facilitator down in /health: 200 degraded naming it", async () => {
      const response = await fetch(`${app.url}/health`);
      expect(response.status).toBe(200);
      const health = await response.json();
      expect(health).toMatchObject({ status: "degraded", down: ["facilitator facilitator"] });
      expect(health.checks.facilitator.status).toBe("down");
    });
  });
});

describe("a stream that breaks mid-way", () => {
  it("ends with an error event instead of a silent truncation, its payment settled", async () => {
    const body = chatBody("[paysvc-dev-fault:break-mid-stream]", { stream: true });
    const signature = await officialPayment(payer().privateKey, await quote(PATH, body));
    const response = await postJson(PATH, body, { "PAYMENT-SIGNATURE": signature });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toContain('"code":"upstream_error"');
    expect(text).not.toContain("[DONE]");
    // Its end waited for the settlement, which the stream's first bytes did not (SETTLEMENT_ORDER=overlap).
    expect(ledgerRow(signature)).toMatchObject({ status: "settled" });
  });
});
