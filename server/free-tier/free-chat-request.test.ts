import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { freeChat } from "../../config/free-tier";
import { freeChatRequests } from "./free-chat-request";

const freeModel = defaultCatalog().freeChat.id;
const parseFreeChatRequest = freeChatRequests(freeModel).parse;

const ask = (extra: Record<string, unknown> = {}) => ({ messages: [{ role: "user", content: "hi" }], ...extra });

describe("parseFreeChatRequest", () => {
  it("sends the free cap as the only output cap, whichever cap the caller used", () => {
    for (const extra of [
      {},
      { max_tokens: 5000 },
      { max_completion_tokens: 100_000 },
      { max_tokens: 9, max_completion_tokens: 9000 },
    ]) {
      const { upstreamBody } = parseFreeChatRequest(ask(extra));
      expect(upstreamBody.max_tokens, JSON.stringify(extra)).toBe(freeChat.maxTokens);
      expect(upstreamBody).not.toHaveProperty("max_completion_tokens");
    }
    expect(parseFreeChatRequest(ask({ max_completion_tokens: 100_000 })).loweredFrom).toBe(100_000);
    expect(parseFreeChatRequest(ask({ max_completion_tokens: 50, max_tokens: 9000 })).upstreamBody.max_tokens).toBe(50);
    expect(parseFreeChatRequest(ask({ max_tokens: 2048 })).loweredFrom).toBeUndefined();
  });

  it("forwards the checked OpenAI fields and the free model, and drops what it does not check", () => {
    const { upstreamBody, stream } = parseFreeChatRequest(
      ask({
        n: 1,
        temperature: 0.3,
        stream: true,
        stream_options: { include_usage: true },
        response_format: { type: "json_object" },
        service_tier: "priority",
        reasoning_effort: "high",
        store: true,
      }),
    );
    expect(stream).toBe(true);
    expect(upstreamBody).toEqual({
      model: freeModel,
      messages: [{ role: "user", content: "hi" }],
      max_tokens: freeChat.maxTokens,
      temperature: 0.3,
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: "json_object" },
    });
  });

  it("counts the input the model reads: messages, tools and a response schema", () => {
    const base = parseFreeChatRequest(ask()).inputTokens;
    const tool = { type: "function", function: { name: "lookup", parameters: { type: "object" } } };
    expect(parseFreeChatRequest(ask({ tools: [tool] })).inputTokens).toBeGreaterThan(base);
    const format = { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } };
    expect(parseFreeChatRequest(ask({ response_format: format })).inputTokens).toBeGreaterThan(base);
    const schema = { type: "object", description: "harbor ".repeat(freeChat.maxInputTokens) };
    expect(() =>
      parseFreeChatRequest(ask({ response_format: { type: "json_schema", json_schema: { name: "a", schema } } })),
    ).toThrow(/free tier reads at most 8192/);
  });

  it("refuses a message of megabytes past the free limit, counting it no further than soon past the limit", () => {
    for (const content of ["harbor ".repeat(300_000), "a".repeat(2_000_000)]) {
      expect(() => parseFreeChatRequest({ messages: [{ role: "user", content }] })).toThrow(
        /The input counts more than 8192 tokens; the free tier reads at most 8192/,
      );
    }
  });

  it("refuses a body that is not an object, and messages that are not role and string content", () => {
    for (const [value, param] of [
      [[], null],
      [{ messages: [] }, "messages"],
      [{ messages: [{ role: "user" }] }, "messages[0].content"],
      [{ messages: [{ role: "user", content: "x" }], model: "vendor-a/gpt-6-luna" }, "model"],
    ] as const) {
      expect(() => parseFreeChatRequest(value), JSON.stringify(value)).toThrow(
        expect.objectContaining({ status: 400, options: expect.objectContaining({ param }) }),
      );
    }
  });
});
