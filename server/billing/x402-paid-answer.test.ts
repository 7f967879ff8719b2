import { decodePaymentResponseHeader } from "@x402/core/http";
import { describe, expect, it } from "vitest";
import { readChunks } from "./__fixtures__/read-chunks";
import type { PreparedAnswer } from "./payment-method";
import { paidAnswer } from "./x402-challenge";
import { eventStreamOf } from "./__fixtures__/events";

const price = { amount: 1234n, decimals: 6, network: "eip155:137" };
const transaction = `0x${"ab".repeat(32)}`;
const settlement = { success: true, transaction, network: "eip155:137" as const };
const timings = { quote: 1, verify: 2, upstream: 3, settle: 4, total: 10 };
const completion = { id: "chatcmpl-1", choices: [], usage: { prompt_tokens: 1, completion_tokens: 2 } };

async function text(body: string | ReadableStream<Uint8Array>): Promise<string> {
  return typeof body === "string" ? body : new Response(body).text();
}

describe("paidAnswer states what the answer cost", () => {
  it("a settled JSON answer: usage.cost, the transaction in usage.cost_details, X-Paysvc-Cost", () => {
    const answer = paidAnswer({ kind: "json", body: completion, price }, settlement, timings);
    expect(answer.headers["x-paysvc-cost"]).toBe("0.001234");
    expect(decodePaymentResponseHeader(answer.headers["payment-response"]!).transaction).toBe(transaction);
    expect(JSON.parse(answer.body as string)).toEqual({
      ...completion,
      usage: {
        prompt_tokens: 1,
        completion_tokens: 2,
        cost: "0.001234",
        cost_details: { network: "eip155:137", transaction },
      },
    });
  });

  it("a settlement whose outcome is unknown: the cost, and no transaction", () => {
    const answer = paidAnswer({ kind: "json", body: completion, price }, undefined, timings);
    expect(answer.headers["x-paysvc-cost"]).toBe("0.001234");
    expect(answer.headers["payment-response"]).toBeUndefined();
    const { usage } = JSON.parse(answer.body as string) as { usage: Record<string, unknown> };
    expect(usage).toMatchObject({ cost: "0.001234", cost_details: { network: "eip155:137", transaction: null } });
  });

  it("an answer without a usage object (images, a prepaid key) says its cost in the header only", async () => {
    const images = { created: 1, data: [{ b64_json: "AA==" }] };
    const answer = paidAnswer({ kind: "json", body: images, status: 201, price }, settlement, timings);
    expect(answer.status).toBe(201);
    expect(answer.headers["x-paysvc-cost"]).toBe("0.001234");
    expect(await text(answer.body)).toBe(JSON.stringify(images));
  });

  it("a stream: the header at once, the cost and transaction in its final usage chunk", async () => {
    const chunks = readChunks("chat-with-usage");
    const prepared: PreparedAnswer = {
      kind: "stream",
      stream: { body: eventStreamOf(chunks), cancel: async () => {} },
    };
    const answer = paidAnswer({ ...prepared, price }, settlement, timings);
    expect(answer.headers["x-paysvc-cost"]).toBe("0.001234");
    const body = await text(answer.body);
    expect(body).toContain(
      `"usage":{"prompt_tokens":10,"completion_tokens":33,"total_tokens":43,"cost":"0.001234","cost_details":{"network":"eip155:137","transaction":"${transaction}"}}}\n\ndata: [DONE]\n\n`,
    );
    expect(body.length - chunks.join("").length).toBe(
      `,"cost":"0.001234","cost_details":{"network":"eip155:137","transaction":"${transaction}"}`.length,
    );
  });

  it("without a price (no x402 session set one), the answer is as the work made it", async () => {
    const answer = paidAnswer({ kind: "json", body: completion }, settlement, timings);
    expect(answer.headers["x-paysvc-cost"]).toBeUndefined();
    expect(await text(answer.body)).toBe(JSON.stringify(completion));
  });
});
