import { describe, expect, it } from "vitest";
import { countChatInputTokens, countChatRequestInputTokens, countTextTokens } from "./count-tokens";

const messages = [{ role: "user", content: "hello" }];
const tools = [{ type: "function", function: { name: "lookup", parameters: { type: "object" } } }];
const base = countChatInputTokens(messages);
const jsonTokens = (value: unknown) => countTextTokens(JSON.stringify(value));

describe("the input tokens of a whole chat request", () => {
  it("are the messages' and tools' alone for a request of messages, tools and settings", () => {
    const request = {
      model: "vendor-a/gpt-6-luna",
      messages,
      tools,
      max_tokens: 10,
      max_completion_tokens: 10,
      temperature: 0.5,
      top_p: 0.5,
      n: 1,
      stream: true,
      stream_options: { include_usage: true },
      stop: ["\n", "END"],
      seed: 1,
      user: "someone",
      presence_penalty: 0,
      frequency_penalty: 0,
      logit_bias: { "1": 2 },
      logprobs: true,
      top_logprobs: 2,
      parallel_tool_calls: true,
      tool_choice: { type: "function", function: { name: "lookup" } },
      store: false,
      metadata: { team: "a" },
      service_tier: "auto",
      reasoning_effort: "low",
      verbosity: "low",
      modalities: ["text"],
      safety_identifier: "s",
      prompt_cache_key: "k",
    };
    expect(countChatRequestInputTokens(request)).toBe(countChatInputTokens(messages, tools));
  });

  it("count legacy functions, a response schema and any field the provider may read, as their JSON", () => {
    const functions = [{ name: "lookup", description: "harbor ".repeat(1000), parameters: { type: "object" } }];
    expect(countChatRequestInputTokens({ messages, functions })).toBe(base + jsonTokens(functions));
    expect(jsonTokens(functions)).toBeGreaterThan(1000);
    const format = { type: "json_schema", json_schema: { name: "a", schema: { description: "harbor ".repeat(50) } } };
    expect(countChatRequestInputTokens({ messages, response_format: format })).toBe(base + jsonTokens(format));
    const prediction = { type: "content", content: "harbor ".repeat(300) };
    expect(countChatRequestInputTokens({ messages, prediction })).toBe(base + jsonTokens(prediction));
    // A field no SDK sends with a value ("not given" is null) costs nothing.
    expect(countChatRequestInputTokens({ messages, functions: null, prediction: null })).toBe(base);
  });

  it("count a message's legacy function_call and any other field it carries", () => {
    const call = { name: "lookup", arguments: JSON.stringify({ q: "harbor ".repeat(100) }) };
    const withCall = [{ role: "assistant", content: null, function_call: call }];
    const plain = countChatInputTokens([{ role: "assistant", content: null }]);
    expect(countChatInputTokens(withCall)).toBe(plain + jsonTokens(call));
    const extra = [{ role: "assistant", content: null, reasoning_content: "harbor ".repeat(100), refusal: null }];
    expect(countChatInputTokens(extra)).toBe(plain + jsonTokens("harbor ".repeat(100)));
  });
});
