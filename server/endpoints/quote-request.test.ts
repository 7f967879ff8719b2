import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { getNetwork } from "../../networks";
import { ApiError } from "../core/errors";
import { countTextTokens } from "../pricing/count-tokens";
import { quoteRequest } from "./quote-request";

// The steps before a 402, as the service takes them: the body reader, the endpoint's parse, its quote.
const polygon = getNetwork("eip155:137");
const catalog = defaultCatalog();
const quote = (path: string, body: unknown, withCatalog = catalog) =>
  quoteRequest(path, typeof body === "string" ? body : JSON.stringify(body), polygon, withCatalog);

async function refusal(quoted: Promise<unknown>) {
  try {
    await quoted;
  } catch (error) {
    const { status, code, message, options } = error as ApiError;
    return { status, code, message, param: options.param };
  }
  return "quoted";
}

const lookup = { type: "function", function: { name: "lookup", parameters: { type: "object" } } };
const luna = (extra: object) => ({
  model: "vendor-a/gpt-6-luna",
  messages: [{ role: "user", content: "Hello" }],
  ...extra,
});

describe("the quote of a chat completion or a response", () => {
  it("is what it was for requests of messages, tools and settings", async () => {
    const tool = {
      type: "function",
      function: {
        name: "lookup",
        description: "Look a word up",
        parameters: { type: "object", properties: { q: { type: "string" } } },
      },
    };
    const call = { id: "c1", type: "function", function: { name: "lookup", arguments: '{"q":"a"}' } };
    // Amounts measured before the input counted fields beyond messages and tools.
    for (const [path, body, amount, input] of [
      ["/v1/chat/completions", luna({}), 2435n, 8],
      [
        "/v1/chat/completions",
        {
          model: "vendor-a/gpt-5.6-sol",
          messages: [
            { role: "system", content: "Be brief." },
            { role: "user", content: "Hello there, how are you?", name: "bob" },
          ],
          ...{ max_tokens: 256, temperature: 0.2, top_p: 0.9, stream: true, stream_options: { include_usage: true } },
          ...{ seed: 3, user: "u1", stop: ["x"], n: 1 },
        },
        4649n,
        23,
      ],
      [
        "/v1/chat/completions",
        {
          model: "vendor-a/gpt-6-sol",
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "hi" },
                { type: "text", text: " there" },
              ],
            },
            { role: "assistant", content: null, tool_calls: [call] },
            { role: "tool", tool_call_id: "c1", content: "result" },
          ],
          ...{ tools: [tool], tool_choice: "auto", parallel_tool_calls: true, max_completion_tokens: 1000 },
        },
        8115n,
        82,
      ],
      ["/v1/responses", { model: "vendor-a/gpt-6-luna", input: "Hello", max_output_tokens: 256 }, 1091n, 8],
      [
        "/v1/responses",
        {
          model: "vendor-a/gpt-5.6-terra",
          instructions: "Be brief",
          input: [
            { role: "user", content: "hi" },
            { type: "function_call", call_id: "c", name: "lookup", arguments: "{}" },
            { type: "function_call_output", call_id: "c", output: "ok" },
          ],
          ...{ tools: [{ type: "function", name: "lookup", parameters: { type: "object" } }], temperature: 0.5 },
          ...{ top_p: 0.5, stream: true },
        },
        35496n,
        64,
      ],
    ] as const) {
      const quoted = await quote(path, body);
      expect(quoted.amount, JSON.stringify(body)).toBe(amount);
      expect(quoted.tokens?.input, JSON.stringify(body)).toBe(input);
    }
  });

  it("counts the legacy functions, a response schema and a message's function_call; refuses a prediction", async () => {
    const base = (await quote("/v1/chat/completions", luna({}))).tokens!.input;
    const inputOf = async (extra: object) => (await quote("/v1/chat/completions", luna(extra))).tokens!.input;
    const text = "harbor ".repeat(2000);
    const functions = [{ name: "lookup", description: text, parameters: { type: "object" } }];
    expect(await inputOf({ functions, max_tokens: 1 })).toBe(base + countTextTokens(JSON.stringify(functions)));
    const format = { type: "json_schema", json_schema: { name: "a", schema: { type: "object", description: text } } };
    expect(await inputOf({ response_format: format })).toBeGreaterThan(base + 2000);
    // Rejected predicted tokens are billed at the output rate, beyond the cap: not priced, so not taken.
    const predicted = luna({ prediction: { type: "content", content: text } });
    expect(await refusal(quote("/v1/chat/completions", predicted))).toMatchObject({ status: 400, param: "prediction" });
    const messages = [{ role: "assistant", content: null, function_call: { name: "lookup", arguments: text } }];
    expect(await inputOf({ messages })).toBeGreaterThan(base + 2000);
  });

  it("refuses legacy functions past the input limit, as it refuses messages past it", async () => {
    const small = { ...catalog, chat: catalog.chat.map((model) => ({ ...model, contextTokens: 1000 })) };
    const functions = [{ name: "lookup", description: "harbor ".repeat(2000) }];
    expect(await refusal(quote("/v1/chat/completions", luna({ functions, max_tokens: 1 }), small))).toMatchObject({
      status: 400,
      code: "context_length_exceeded",
    });
  });
});

describe("a body of one long run", () => {
  it("is quoted by its pieces: 2 MB of one letter or of one emoji, in a chat completion or a response", async () => {
    const withContent = (content: string) => ({ ...luna({}), messages: [{ role: "user", content }] });
    const chatBase = (await quote("/v1/chat/completions", withContent(""))).tokens!.input;
    const hello = await quote("/v1/responses", { model: "vendor-a/gpt-6-luna", input: "hello" });
    const responseBase = hello.tokens!.input - countTextTokens("hello");
    // 128 copies of a letter are 16 tokens, an emoji is one (see pricing/linear-token-count.ts).
    for (const [run, tokens] of [
      ["a".repeat(2_000_000), 250_000],
      ["😀".repeat(500_000), 500_000],
    ] as const) {
      expect(Buffer.byteLength(run)).toBe(2_000_000);
      expect((await quote("/v1/chat/completions", withContent(run))).tokens!.input).toBe(chatBase + tokens);
      const response = await quote("/v1/responses", { model: "vendor-a/gpt-6-luna", input: run });
      expect(response.tokens!.input).toBe(responseBase + tokens);
    }
  });
});

describe("a body the provider would refuse", () => {
  it("is a 400 naming the field, never a quote", async () => {
    for (const [extra, param] of [
      [{ top_p: 7 }, "top_p"],
      [{ stop: 5 }, "stop"],
      [{ tools: "x" }, "tools"],
      [{ response_format: { type: "bogus" } }, "response_format.type"],
    ] as const) {
      expect(await refusal(quote("/v1/chat/completions", luna(extra))), JSON.stringify(extra)).toMatchObject({
        status: 400,
        code: "invalid_request",
        param,
      });
    }
    const response = { model: "vendor-a/gpt-6-luna", input: "x", top_p: 7 };
    expect(await refusal(quote("/v1/responses", response))).toMatchObject({ status: 400, param: "top_p" });
  });

  it("nested deeper than JSON.stringify can follow is a 400, never a quote", async () => {
    const deep = (field: string) =>
      `{"model":"vendor-a/gpt-6-luna",${field}:${"[".repeat(100_000)}${"]".repeat(100_000)},"messages":[{"role":"user","content":"x"}]}`;
    for (const field of ['"tools"', '"response_format"', '"functions"']) {
      expect(await refusal(quote("/v1/chat/completions", deep(field))), field).toMatchObject({
        status: 400,
        message: expect.stringContaining("at most 128 levels deep"),
      });
    }
    const response = `{"model":"vendor-a/gpt-6-luna","input":"x","metadata":${"[".repeat(100_000)}${"]".repeat(100_000)}}`;
    expect(await refusal(quote("/v1/responses", response))).toMatchObject({ status: 400 });
    expect(await refusal(quote("/v1/chat/completions", luna({ tools: [lookup] })))).toBe("quoted");
  });
});
