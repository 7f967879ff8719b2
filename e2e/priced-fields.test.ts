import Database from "better-sqlite3";
import OpenAI from "openai";
import { wrapFetchWithPayment } from "@x402/fetch";
import { describe, expect, it } from "vitest";
import { balances, buyPrepaidCode, chatBody, paymentClient, stack } from "./support/payments";

const payer = () => stack().payers[0]!;

/** Rows in the service's payments ledger: a payment taken, or even only tried, leaves one. */
function ledgerRows(): number {
  const database = new Database(stack().databasePath, { readonly: true });
  try {
    return (database.prepare("select count(*) as rows from payments").get() as { rows: number }).rows;
  } finally {
    database.close();
  }
}

/** The official openai SDK paying with the official x402 client, counting the requests it sends with a payment. */
function countingPayingOpenAI() {
  const sent = { paid: 0 };
  const paidFetch = wrapFetchWithPayment(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = new Request(input, init);
    if (request.headers.has("payment-signature")) sent.paid++;
    return fetch(request);
  }, paymentClient(payer().privateKey));
  const openai = new OpenAI({ apiKey: "x402", baseURL: `${stack().appUrl}/v1`, fetch: paidFetch, maxRetries: 0 });
  return { openai, sent };
}

/** The SDK's error for a refused call: status, param and message. */
async function refusal(call: Promise<unknown>) {
  const error = await call.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(OpenAI.APIError);
  const { status, param, message } = error as InstanceType<typeof OpenAI.APIError>;
  return { status, param, message };
}

describe("paid requests carry only priced fields", () => {
  it("refuses service_tier priority on a paid chat with 400 naming the field, before any payment", async () => {
    const { openai, sent } = countingPayingOpenAI();
    const before = await balances(payer().address);
    const rows = ledgerRows();
    const refused = await refusal(
      openai.chat.completions.create({ ...chatBody("fast please"), service_tier: "priority" } as never),
    );
    expect(refused).toMatchObject({ status: 400, param: "service_tier" });
    expect(refused.message).toMatch(/'service_tier' changes what the provider charges/);
    for (const [extra, param] of [
      [{ modalities: ["text", "audio"], audio: { voice: "alloy", format: "wav" } }, "modalities"],
      [{ web_search_options: {} }, "web_search_options"],
      [{ prediction: { type: "content", content: "draft" } }, "prediction"],
    ] as const) {
      const other = await refusal(openai.chat.completions.create({ ...chatBody("x"), ...extra } as never));
      expect(other, JSON.stringify(extra)).toMatchObject({ status: 400, param });
    }
    expect(sent.paid).toBe(0);
    expect(ledgerRows()).toBe(rows);
    expect(await balances(payer().address)).toEqual(before);
  });

  it("refuses service_tier priority on a paid Response the same way", async () => {
    const { openai, sent } = countingPayingOpenAI();
    const before = await balances(payer().address);
    const rows = ledgerRows();
    const refused = await refusal(
      openai.responses.create({
        model: "vendor-a/gpt-6-luna",
        input: "fast please",
        max_output_tokens: 64,
        service_tier: "priority",
      }),
    );
    expect(refused).toMatchObject({ status: 400, param: "service_tier" });
    expect(refused.message).toMatch(/'service_tier' changes what the provider charges/);
    expect(sent.paid).toBe(0);
    expect(ledgerRows()).toBe(rows);
    expect(await balances(payer().address)).toEqual(before);
  });

  it("still serves and charges a paid chat with harmless fields", async () => {
    const { openai, sent } = countingPayingOpenAI();
    const completion = await openai.chat.completions.create({
      ...chatBody("harmless fields"),
      temperature: 0.2,
      top_p: 0.9,
      stop: ["\n\n"],
      seed: 7,
      user: "caller-1",
      metadata: { run: "48" },
      store: false,
      service_tier: "default",
      response_format: { type: "text" },
    } as never);
    expect(completion.choices[0]?.message.content).toContain("harmless fields");
    expect(sent.paid).toBe(1);
  });

  it("refuses service_tier priority on a prepaid key's call, reserving and charging nothing", async () => {
    const key = await buyPrepaidCode(payer().privateKey, { model: "vendor-a/gpt-6-luna", tokens: 100_000 });
    const openai = new OpenAI({ apiKey: key.code, baseURL: key.api_base, maxRetries: 0 });
    const status = async () =>
      (
        await (
          await fetch(`${key.api_base}/prepaid/status`, { headers: { authorization: `Bearer ${key.code}` } })
        ).json()
      ).tokens;
    // Each call made only when awaited: a refusal made early would be an unhandled rejection meanwhile.
    for (const call of [
      () => openai.chat.completions.create({ ...chatBody("fast please"), service_tier: "priority" } as never),
      () => openai.responses.create({ model: "vendor-a/gpt-6-luna", input: "fast please", service_tier: "priority" }),
    ]) {
      expect(await refusal(call())).toMatchObject({ status: 400, param: "service_tier" });
    }
    expect(await status()).toMatchObject({ used: 0, reserved: 0, remaining: 100_000 });
  });
});
