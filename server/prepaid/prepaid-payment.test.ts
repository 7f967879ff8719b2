import { mkdtempSync, rmSync } from "node:fs";
import { DeferredWrites } from "../lifecycle/deferred-writes";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { findChatModel, type ChatModel } from "../../config/catalog/model-catalog";
import { isApiError } from "../core/errors";
import { ServiceMetrics } from "../metrics/service-metrics";
import { newPrepaidCode } from "./prepaid-code";
import type { PrepaidKeyStore } from "./prepaid-key-store";
import { openSqliteStorage } from "../storage/sqlite/sqlite-storage";
import type { Storage } from "../storage/storage";
import { UpstreamError } from "../upstream/upstream-error";
import { chatUsageReader } from "../billing/chat-stream-meter";
import type { BillableCall, PaymentSession } from "../billing/payment-method";
import { PrepaidPayment } from "./prepaid-payment";
import { eachEvent, parseEventStream, type EventStream } from "../http/event-stream";

const luna = findChatModel(defaultCatalog(), "vendor-a/gpt-6-luna") as ChatModel;
const sol = findChatModel(defaultCatalog(), "vendor-a/gpt-6-sol") as ChatModel;
const encoder = new TextEncoder();

describe("prepaid billing on a real SQLite file", () => {
  let directory: string;
  let storage: Storage;
  let store: PrepaidKeyStore;
  const metrics = new ServiceMetrics("eip155:137");
  const writes = new DeferredWrites((work) => work);
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-prepaid-"));
    storage = openSqliteStorage(join(directory, "keys.sqlite"));
    store = storage.prepaidKeys;
  });
  afterEach(async () => {
    await storage.close();
    rmSync(directory, { recursive: true, force: true });
  });

  const keyFor = async (total: number) => {
    const code = newPrepaidCode();
    return { code, id: await store.issue(code, luna.id, total, undefined) };
  };
  const call = (input: number, maxOutput: number, model = luna): BillableCall => ({
    request: {
      method: "POST",
      url: "http://service.test/v1/chat/completions",
      headers: { get: () => null },
      body: null,
    },
    body: { value: {}, sha256: "" },
    resourceUrl: "http://service.test/v1/chat/completions",
    endpoint: "/v1/chat/completions",
    quote: {
      amount: 1n,
      display: {},
      description: "Chat",
      model: model.id,
      tokens: { model, input, maxOutput, decimals: 6 },
    },
    quoteMs: 0,
    usage: chatUsageReader,
  });
  async function granted(code: string, billable: BillableCall, leaseMs = 60_000): Promise<PaymentSession> {
    const result = await new PrepaidPayment(store, code, leaseMs, metrics, writes).authorize(billable);
    if (result.kind !== "granted") throw new Error("expected a grant");
    return result.session;
  }

  it("renews a call's lease every third of it, whole or streamed, until it is charged; then the lease ends", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    try {
      const key = await keyFor(10_000);
      const started = Date.now();
      const session = await granted(key.code, call(100, 1000), 3000);
      // Renewed at 1 s and 2 s (a third of the 3 s lease): still held past its first 3 s, while the call runs.
      await vi.advanceTimersByTimeAsync(2500);
      expect((await store.balance(key.id, started + 4500)).reserved).toBe(1100);
      // A process that stops renewing (here: the call ends) holds nothing once its last lease is over.
      await session.finish({ kind: "json", body: { usage: { completion_tokens: 10 } } });
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await store.balance(key.id)).toMatchObject({ used: 110, reserved: 0, remaining: 9890 });
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("keeps no lease of a call it released, and a lease never outlives its reservation's process", async () => {
    vi.useFakeTimers({ toFake: ["setInterval", "clearInterval", "Date"] });
    try {
      const key = await keyFor(10_000);
      const session = await granted(key.code, call(100, 1000), 3000);
      const started = Date.now();
      await vi.advanceTimersByTimeAsync(1500);
      await session.failed(new UpstreamError("network", "refused")).catch(() => undefined);
      expect(vi.getTimerCount()).toBe(0);
      // Released at once, not when the lease would have run out.
      expect((await store.balance(key.id, started + 1500)).reserved).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("lowers the output cap to what the budget covers, and charges input plus the reported output", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(100, 4096));
    expect(session.grant).toMatchObject({ outputCap: 900 });
    const finished = await session.finish({ kind: "json", body: { usage: { completion_tokens: 40 } } });
    const answer = finished.answer;
    expect(answer.headers["x-prepaid-max-tokens"]).toBe("900");
    expect(answer.headers["x-prepaid-max-tokens-lowered-from"]).toBe("4096");
    expect(await store.balance(key.id)).toMatchObject({ used: 140, reserved: 0, remaining: 860 });
  });

  it("charges the whole reservation when the answer reports no usage", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    await session.finish({ kind: "json", body: {} });
    expect(await store.balance(key.id)).toMatchObject({ used: 60, reserved: 0 });
  });

  it("releases everything when the work fails, and says nothing was charged", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    expect((await store.balance(key.id)).reserved).toBe(60);
    const error = await session
      .failed(new UpstreamError("timeout", "upstream did not answer"))
      .catch((thrown) => thrown);
    expect(isApiError(error) && error.status).toBe(502);
    expect(await store.balance(key.id)).toMatchObject({ used: 0, reserved: 0, remaining: 1000 });
  });

  it("meters a stream: charged when it ends, not before", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    const events = [
      'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n',
      'data: {"choices":[],"usage":{"completion_tokens":7}}\n\n',
      "data: [DONE]\n\n",
    ];
    let index = 0;
    const body = new ReadableStream<Uint8Array>({
      pull: (controller) => {
        const next = events[index++];
        if (next) controller.enqueue(encoder.encode(next));
        else controller.close();
      },
    });
    const finished = await session.finish({
      kind: "stream",
      stream: { body: parseEventStream(body), cancel: async () => undefined },
    });
    const answer = finished.answer;
    expect((await store.balance(key.id)).reserved).toBe(60);
    await new Response(answer.body as ReadableStream).text();
    expect(await store.balance(key.id)).toMatchObject({ used: 17, reserved: 0 });
  });

  const streamOfEvents = (events: string[]) => {
    let index = 0;
    return parseEventStream(
      new ReadableStream<Uint8Array>({
        pull: (controller) => {
          const next = events[index++];
          if (next) controller.enqueue(encoder.encode(next));
          else controller.close();
        },
      }),
    );
  };

  it("says what the tokens charged cost at the key's price, and what is left, in usage and the headers", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(100, 4096));
    const body = { id: "chatcmpl-1", usage: { prompt_tokens: 98, completion_tokens: 40, total_tokens: 138 } };
    const { answer } = await session.finish({ kind: "json", body });
    // 140 tokens at luna's input rate, 0.07 USD per 1M: 9.8 atomic units, rounded up.
    expect(JSON.parse(answer.body as string)).toEqual({
      id: "chatcmpl-1",
      usage: {
        ...body.usage,
        cost: "0.000010",
        prepaid_charged_tokens: 140,
        prepaid_remaining_tokens: 860,
      },
    });
    expect(answer.headers["x-paysvc-cost"]).toBe("0.000010");
    expect(answer.headers["x-paysvc-prepaid-remaining"]).toBe("860");
    expect((await store.balance(key.id)).remaining).toBe(860);
  });

  it("says the cost of an answer without usage in the headers only", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    const { answer } = await session.finish({ kind: "json", body: { id: "x" } });
    expect(answer.body).toBe('{"id":"x"}');
    expect(answer.headers["x-paysvc-cost"]).toBe("0.000005"); // 60 tokens: 4.2 units, rounded up
    expect(answer.headers["x-paysvc-prepaid-remaining"]).toBe("940");
  });

  it("charges a stream as its usage chunk passes, once, and states the charge and the balance after it there", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    const events = [
      'data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}\n\n',
      'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16}}\n\n',
      "data: [DONE]\n\n",
    ];
    const stream = { body: streamOfEvents(events), cancel: async () => undefined };
    const { answer } = await session.finish({ kind: "stream", stream });
    // Not known before the stream's end: no cost header.
    expect(answer.headers["x-paysvc-cost"]).toBeUndefined();
    const text = await new Response(answer.body as ReadableStream).text();
    expect(text).toBe(
      [
        events[0],
        'data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":7,"total_tokens":16,"cost":"0.000002","prepaid_charged_tokens":17,"prepaid_remaining_tokens":983}}\n\n',
        events[2],
      ].join(""),
    );
    expect(await store.balance(key.id)).toMatchObject({ used: 17, reserved: 0, remaining: 983 });
  });

  it("hands the stream to the answer's encoder last, its usage chunk charged and stating the cost", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    const events = [
      'data: {"choices":[{"delta":{"content":"hi"}}]}\n\n',
      'data: {"choices":[],"usage":{"completion_tokens":7}}\n\n',
      "data: [DONE]\n\n",
    ];
    const stream = { body: streamOfEvents(events), cancel: async () => undefined };
    // An encoder that keeps the usage chunk from the caller (chat's, for a caller who did not ask for usage).
    const seen: unknown[] = [];
    const encode = {
      json: (body: unknown) => body,
      stream: (canonical: EventStream) =>
        eachEvent(canonical, (event) => {
          const usage = event.json()?.usage;
          if (usage === undefined) return event;
          seen.push(usage);
          return undefined;
        }),
    };
    const { answer } = await session.finish({ kind: "stream", stream, encode });
    const text = await new Response(answer.body as ReadableStream).text();
    expect(text).toBe(`${events[0]}${events[2]}`);
    expect(seen).toEqual([expect.objectContaining({ completion_tokens: 7, cost: expect.any(String) })]);
    expect(seen[0]).toMatchObject({ prepaid_charged_tokens: 17, prepaid_remaining_tokens: 983 });
    expect(await store.balance(key.id)).toMatchObject({ used: 17, reserved: 0 });
  });

  it("hands a whole answer to the encoder once its usage states the cost", async () => {
    const key = await keyFor(1000);
    const session = await granted(key.code, call(10, 50));
    const body = { choices: [{ message: { content: "hi" } }], usage: { prompt_tokens: 10, completion_tokens: 7 } };
    const encode = {
      json: (completion: unknown) => ({ encoded: (completion as { usage: unknown }).usage }),
      stream: (canonical: EventStream) => canonical,
    };
    const { answer } = await session.finish({ kind: "json", body, encode });
    expect(JSON.parse(answer.body as string)).toEqual({
      encoded: expect.objectContaining({ completion_tokens: 7, prepaid_charged_tokens: 17 }),
    });
  });

  it("refuses an unknown key (401), a key for another model (400) and a spent budget (429), reserving nothing", async () => {
    const key = await keyFor(100);
    const refusal = async (code: string, billable: BillableCall) =>
      new PrepaidPayment(store, code, 60_000, metrics, writes).authorize(billable).then(
        () => undefined,
        (error: unknown) => (isApiError(error) ? error.status : error),
      );
    expect(await refusal(newPrepaidCode(), call(10, 10))).toBe(401);
    expect(await refusal(key.code, call(10, 10, sol))).toBe(400);
    expect(await refusal(key.code, call(100, 10))).toBe(429);
    expect(await store.balance(key.id)).toMatchObject({ used: 0, reserved: 0 });
  });
});
