import { describe, expect, it } from "vitest";
import { ApiError } from "../core/errors";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { freeChatRequests } from "../free-tier/free-chat-request";
import { parseChatRequest as parseWith, withOutputCap } from "./chat-request";

const parseChatRequest = (value: unknown) => parseWith(value, defaultCatalog());

const body = (extra: object) => ({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content: "x" }],
  ...extra,
});

describe("the upstream body's output cap", () => {
  const capped = (extra: object, cap: number) => withOutputCap(parseChatRequest(body(extra)).body, cap);

  it("puts the cap in each cap field the caller sent, else in max_tokens", () => {
    expect(capped({}, 4096)).toMatchObject({ max_tokens: 4096 });
    expect(capped({}, 4096)).not.toHaveProperty("max_completion_tokens");
    expect(capped({ max_tokens: 500 }, 300)).toMatchObject({ max_tokens: 300 });
    expect(capped({ max_completion_tokens: 500 }, 300)).toMatchObject({ max_completion_tokens: 300 });
    expect(capped({ max_completion_tokens: 500 }, 300)).not.toHaveProperty("max_tokens");
  });

  it("never passes on a larger cap beside the priced one", () => {
    const both = capped({ max_completion_tokens: 1, max_tokens: 128_000 }, 1);
    expect(both).toMatchObject({ max_completion_tokens: 1, max_tokens: 1 });
    expect(parseChatRequest(body({ max_completion_tokens: 1, max_tokens: 128_000 })).maxOutputTokens).toBe(1);
  });
});

describe("n", () => {
  it("accepts 1, null or nothing, and refuses more choices naming the field", () => {
    expect(parseChatRequest(body({ n: 1 })).body.n).toBe(1);
    expect(parseChatRequest(body({ n: null })).body.n).toBeNull();
    for (const n of [2, 0, 1.5, "1"]) {
      expect(() => parseChatRequest(body({ n }))).toThrow(ApiError);
      try {
        parseChatRequest(body({ n }));
      } catch (error) {
        expect((error as ApiError).options.param).toBe("n");
      }
    }
  });
});

describe("the OpenAI fields a provider would refuse", () => {
  const freeParse = freeChatRequests(defaultCatalog().freeChat.id).parse;
  const refusal = (parse: () => unknown) => {
    try {
      parse();
    } catch (error) {
      return {
        status: (error as ApiError).status,
        message: (error as ApiError).message,
        param: (error as ApiError).options.param,
      };
    }
    throw new Error("accepted");
  };

  it("are refused before any quote, naming the field, with the free chat's rules and words", () => {
    const toolCall = (name: string) => ({ id: "c1", type: "function", function: { name, arguments: "{}" } });
    for (const [extra, param] of [
      [{ top_p: 7 }, "top_p"],
      [{ stop: 5 }, "stop"],
      [{ stop: ["a", "b", "c", "d", "e"] }, "stop"],
      [{ tools: "x" }, "tools"],
      [{ tools: [{ type: "function", function: { name: "has space" } }] }, "tools[0].function.name"],
      [{ response_format: { type: "bogus" } }, "response_format.type"],
      [{ presence_penalty: 3 }, "presence_penalty"],
      [{ frequency_penalty: -3 }, "frequency_penalty"],
      [{ seed: 1.5 }, "seed"],
      [{ user: 7 }, "user"],
      [{ tool_choice: "sometimes" }, "tool_choice"],
      [{ parallel_tool_calls: "yes" }, "parallel_tool_calls"],
      [{ temperature: 3 }, "temperature"],
      [
        { messages: [{ role: "assistant", content: "", tool_calls: [toolCall("a b")] }] },
        "messages[0].tool_calls[0].function.name",
      ],
      [{ messages: [{ role: "tool", content: "x", tool_call_id: 5 }] }, "messages[0].tool_call_id"],
    ] as const) {
      const paid = refusal(() => parseChatRequest(body(extra)));
      expect(paid, JSON.stringify(extra)).toMatchObject({ status: 400, param });
      const messages = "messages" in extra ? {} : { messages: [{ role: "user", content: "x" }] };
      expect(
        refusal(() => freeParse({ ...messages, ...extra })),
        JSON.stringify(extra),
      ).toEqual(paid);
    }
  });

  it("accept OpenAI's values, and let the forwarded fields they do not name through to the provider", () => {
    const extra = {
      top_p: 0.5,
      stop: ["\n"],
      seed: 7,
      presence_penalty: -1,
      frequency_penalty: 1,
      user: "u-1",
      response_format: { type: "json_schema", json_schema: { name: "answer", schema: { type: "object" } } },
      tools: [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }],
      tool_choice: { type: "function", function: { name: "lookup" } },
      parallel_tool_calls: false,
      logit_bias: { "50256": -100 },
      service_tier: "default",
      top_logprobs: 3,
    };
    expect(withOutputCap(parseChatRequest(body(extra)).body, 10)).toMatchObject(extra);
  });

  it("accept null for every field they check, as OpenAI's API does (clients send explicit nulls)", () => {
    const nulls = Object.fromEntries(
      ["temperature", "top_p", "stop", "seed", "presence_penalty", "frequency_penalty", "user", "response_format"]
        .concat(["tools", "tool_choice", "parallel_tool_calls", "stream", "stream_options"])
        .map((field) => [field, null]),
    );
    expect(parseChatRequest(body(nulls)).body).toMatchObject(nulls);
    const free = freeChatRequests(defaultCatalog().freeChat.id);
    expect(free.parse(body({ ...nulls, model: defaultCatalog().freeChat.id }))).toBeDefined();
  });
});

describe("the default output cap", () => {
  const catalog = defaultCatalog();
  const writesLittle = { ...catalog, chat: catalog.chat.map((model) => ({ ...model, maxOutputTokens: 1000 })) };

  it("is 4096, or the model's own maximum where it writes less, so a call without a cap is not refused", () => {
    expect(parseChatRequest(body({})).maxOutputTokens).toBe(4096);
    const parsed = parseWith(body({}), writesLittle);
    expect(parsed.maxOutputTokens).toBe(1000);
    expect(withOutputCap(parsed.body, parsed.maxOutputTokens)).toMatchObject({ max_tokens: 1000 });
    expect(() => parseWith(body({ max_tokens: 1001 }), writesLittle)).toThrow(/writes at most 1000 tokens/);
  });
});

describe("fields whose cost the price does not cover", () => {
  const refused = (extra: object) => {
    try {
      parseChatRequest(body(extra));
    } catch (error) {
      return {
        status: (error as ApiError).status,
        param: (error as ApiError).options.param,
        message: (error as ApiError).message,
      };
    }
    return undefined;
  };

  it("refuses each naming the field, and lets a value that asks for nothing more pass", () => {
    for (const [extra, param] of [
      [{ service_tier: "priority" }, "service_tier"],
      [{ service_tier: "auto" }, "service_tier"],
      [{ service_tier: "flex" }, "service_tier"],
      [{ modalities: ["text", "audio"] }, "modalities"],
      [{ audio: { voice: "alloy", format: "wav" } }, "audio"],
      [{ web_search_options: {} }, "web_search_options"],
      [{ prediction: { type: "content", content: "x" } }, "prediction"],
    ] as const) {
      expect(refused(extra), JSON.stringify(extra)).toMatchObject({
        status: 400,
        param,
        message: expect.stringContaining(`'${param}' changes what the provider charges`),
      });
    }
    const harmless = parseChatRequest(body({ service_tier: "default", modalities: ["text"], audio: null })).body;
    expect(harmless).toMatchObject({ service_tier: "default", modalities: ["text"], audio: null });
  });

  it("forwards OpenAI's token-priced fields, refuses others naming them, and drops a null one", () => {
    const harmless = {
      temperature: 0.2,
      top_p: 0.9,
      stop: ["\n"],
      seed: 7,
      user: "u",
      metadata: { run: "1" },
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { "50256": -100 },
      stream: true,
      stream_options: { include_usage: true },
      response_format: { type: "json_object" },
      tool_choice: "auto",
      reasoning_effort: "low",
      store: false,
      prompt_cache_key: "k",
      safety_identifier: "s",
    };
    expect(parseChatRequest(body(harmless)).body).toMatchObject(harmless);
    for (const field of ["plugins", "provider", "models", "top_k"]) {
      expect(refused({ [field]: ["web"] })).toMatchObject({ status: 400, param: field });
    }
    expect(parseChatRequest(body({ provider: null })).body).not.toHaveProperty("provider");
  });
});
