import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import type { ApiError } from "../core/errors";
import { parseCountTokensRequest, parseMessagesRequest as parseWith } from "./messages-request";

const catalog = defaultCatalog();
const parseMessagesRequest = (value: unknown) => parseWith(value, catalog);
const body = (extra: object) => ({
  model: "vendor-a/gpt-6-luna",
  max_tokens: 100,
  messages: [{ role: "user", content: "hi" }],
  ...extra,
});

/** The refusal's status, parameter and message, or "accepted". */
function refusal(value: unknown) {
  try {
    parseMessagesRequest(value);
    return "accepted";
  } catch (error) {
    const { status, code, message, options } = error as ApiError;
    return { status, code, param: options.param, message };
  }
}

describe("parseMessagesRequest", () => {
  it("accepts a request shaped as Claude Code sends it, fields it cannot honour included", () => {
    const request = body({
      max_tokens: 32000,
      stream: true,
      thinking: { type: "adaptive" },
      context_management: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      output_config: { effort: "high" },
      metadata: { user_id: "user_abc" },
      system: [
        { type: "text", text: "You are Claude Code." },
        { type: "text", text: "Be brief.", cache_control: { type: "ephemeral" } },
      ],
      tools: [
        { name: "Bash", description: "Runs a command", input_schema: { type: "object", properties: {} } },
        { type: "web_search_20250305", name: "web_search", max_uses: 5 },
      ],
      messages: [
        { role: "user", content: [{ type: "text", text: "list files", cache_control: { type: "ephemeral" } }] },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "I should run ls", signature: "sig" },
            { type: "redacted_thinking", data: "opaque" },
            { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "ls" } },
          ],
        },
        {
          role: "user",
          content: [
            {
              type: "tool_result",
              tool_use_id: "toolu_1",
              content: [{ type: "text", text: "a.txt" }],
              is_error: false,
            },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
      ],
      tool_choice: { type: "auto", disable_parallel_tool_use: true },
      temperature: 1,
      top_p: 0.9,
      top_k: 40,
      stop_sequences: ["END"],
    });
    const parsed = parseMessagesRequest(request);
    expect(parsed.model.id).toBe("vendor-a/gpt-6-luna");
    expect(parsed.maxOutputTokens).toBe(32000);
    expect(parsed.body.messages).toHaveLength(3);
  });

  it("refuses bad values naming the field, before any quote", () => {
    for (const [extra, param, words] of [
      [{ max_tokens: 0 }, "max_tokens", "at least 1"],
      [{ max_tokens: 1.5 }, "max_tokens", "integer"],
      [{ messages: [] }, "messages", "at least one message"],
      [{ messages: [{ role: "robot", content: "x" }] }, "messages[0].role", "user, assistant or system"],
      [
        { messages: [{ role: "user", content: [{ type: "video" }] }] },
        "messages[0].content[0].type",
        "text, image, tool_use",
      ],
      [
        { messages: [{ role: "user", content: [{ type: "tool_use", id: "t", name: "a b", input: {} }] }] },
        "messages[0].content[0].name",
        "letters",
      ],
      [{ temperature: 1.5 }, "temperature", "at most 1"],
      [{ top_k: -1 }, "top_k", "at least 0"],
      [{ stop_sequences: "END" }, "stop_sequences", "array of strings"],
      [{ tools: [{ name: "f" }] }, "tools[0].input_schema", "JSON Schema"],
      [{ tool_choice: { type: "sometimes" } }, "tool_choice.type", "must be"],
      [{ system: 7 }, "system", "string or an array of text blocks"],
    ] as const) {
      const refused = refusal(body(extra));
      expect(refused, JSON.stringify(extra)).toMatchObject({ status: 400, param });
      expect((refused as { message: string }).message, JSON.stringify(extra)).toContain(words);
    }
  });

  it("requires max_tokens and messages, as Anthropic does", () => {
    const { max_tokens: _cap, ...uncapped } = body({});
    expect(refusal(uncapped)).toMatchObject({
      status: 400,
      param: "max_tokens",
      message: "max_tokens: Field required",
    });
    const { messages: _messages, ...empty } = body({});
    expect(refusal(empty)).toMatchObject({ status: 400, param: "messages" });
  });

  it("refuses an unknown model (the list of models in the message) and a cap above the model's", () => {
    expect(refusal(body({ model: "claude-nope" }))).toMatchObject({ status: 400, code: "model_not_found" });
    expect(refusal(body({ model: undefined }))).toMatchObject({ status: 400, param: "model" });
    const small = { ...catalog, chat: catalog.chat.map((model) => ({ ...model, maxOutputTokens: 1000 })) };
    expect(() => parseWith(body({ max_tokens: 1001 }), small)).toThrow(/writes at most 1000 tokens/);
  });

  it("refuses fields that change the price, naming why, but not their harmless values", () => {
    for (const [field, value] of [
      ["service_tier", "auto"],
      ["speed", "fast"],
      ["inference_geo", "us"],
      ["container", "container_1"],
      ["fallbacks", [{ model: "x" }]],
    ] as const) {
      expect(refusal(body({ [field]: value }))).toMatchObject({
        status: 400,
        param: field,
        message: expect.stringContaining("changes what the provider charges"),
      });
    }
    const harmless = { service_tier: "standard_only", speed: "standard", inference_geo: null, container: null };
    expect(refusal(body(harmless))).toBe("accepted");
  });

  it("refuses a field it does not know, naming the fields it accepts", () => {
    expect(refusal(body({ frequency_penalty: 1 }))).toMatchObject({
      status: 400,
      param: "frequency_penalty",
      message: expect.stringContaining("Extra inputs are not permitted"),
    });
  });
});

describe("parseCountTokensRequest", () => {
  it("takes a request without max_tokens, and checks the rest as a message request", () => {
    const { max_tokens: _cap, ...uncapped } = body({});
    expect(parseCountTokensRequest(uncapped, catalog).body.messages).toHaveLength(1);
    expect(() => parseCountTokensRequest({ ...uncapped, messages: "hi" }, catalog)).toThrow(/messages/);
  });
});
