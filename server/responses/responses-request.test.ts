import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { ApiError } from "../core/errors";
import { parseResponsesRequest as parseWith } from "./responses-request";
import { toChatRequest } from "./to-chat-request";

const parseResponsesRequest = (value: unknown) => parseWith(value, defaultCatalog());

const body = (extra: object) => ({ model: "vendor-a/gpt-6-luna", input: "x", ...extra });

/** The refusal's status, parameter and message, or "accepted". */
function refusal(value: unknown) {
  try {
    parseResponsesRequest(value);
    return "accepted";
  } catch (error) {
    const { status, message, options } = error as ApiError;
    return { status, param: options.param, message };
  }
}

describe("the fields a Responses request shares with a chat", () => {
  it("are checked by the chat's rules, naming the field, before any quote", () => {
    const call = (name: string) => ({ type: "function_call", call_id: "c", name, arguments: "{}" });
    for (const [extra, param, words] of [
      [{ top_p: 7 }, "top_p", "must be at most 1"],
      [{ temperature: -1 }, "temperature", "must be at least 0"],
      [{ tools: [{ type: "function", name: "has space" }] }, "tools[0].name", "letters, digits"],
      [{ tools: [{ type: "function", name: "f", parameters: "x" }] }, "tools[0].parameters", "JSON Schema"],
      [{ tool_choice: { type: "function", name: "a.b" } }, "tool_choice.name", "letters, digits"],
      [{ tool_choice: "sometimes" }, "tool_choice", "must be"],
      [{ input: [call("a b")] }, "input[0].name", "letters, digits"],
      [{ parallel_tool_calls: "yes" }, "parallel_tool_calls", "must be a boolean"],
      [{ user: 7 }, "user", "must be a string"],
    ] as const) {
      const refused = refusal(body(extra));
      expect(refused, JSON.stringify(extra)).toMatchObject({ status: 400, param });
      expect((refused as { message: string }).message, JSON.stringify(extra)).toContain(words);
    }
  });

  it("accept null where the Responses API does, and valid values", () => {
    const extra = {
      top_p: null,
      temperature: null,
      parallel_tool_calls: null,
      tools: [{ type: "function", name: "f" }],
    };
    expect(refusal(body(extra))).toBe("accepted");
    expect(refusal(body({ top_p: 1, temperature: 2, tool_choice: { type: "function", name: "f-1" } }))).toBe(
      "accepted",
    );
  });
});

describe("the default max_output_tokens", () => {
  it("is 4096, or the model's own maximum where it writes less", () => {
    expect(parseResponsesRequest(body({})).maxOutputTokens).toBe(4096);
    const catalog = defaultCatalog();
    const writesLittle = { ...catalog, chat: catalog.chat.map((model) => ({ ...model, maxOutputTokens: 1000 })) };
    const parsed = parseWith(body({}), writesLittle);
    expect(parsed.maxOutputTokens).toBe(1000);
    expect(toChatRequest(parsed).max_tokens).toBe(1000);
    expect(() => parseWith(body({ max_output_tokens: 1001 }), writesLittle)).toThrow(/writes at most 1000 tokens/);
  });
});

describe("fields whose cost the price does not cover", () => {
  it("are refused naming the field and what it would cost, before they are named unsupported", () => {
    expect(refusal(body({ service_tier: "priority" }))).toMatchObject({
      status: 400,
      param: "service_tier",
      message: expect.stringContaining("'service_tier' changes what the provider charges"),
    });
    expect(refusal(body({ service_tier: "default" }))).toMatchObject({
      param: "service_tier",
      message: expect.stringContaining("Unsupported parameter: 'service_tier'. The Responses API here"),
    });
  });
});
