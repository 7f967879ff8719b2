import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { parseMessagesRequest } from "./messages-request";
import { toChatRequest } from "./to-chat-request";

const translate = (extra: object) =>
  toChatRequest(
    parseMessagesRequest(
      { model: "vendor-a/gpt-6-luna", max_tokens: 200, messages: [{ role: "user", content: "hi" }], ...extra },
      defaultCatalog(),
    ),
  );

describe("toChatRequest", () => {
  it("puts the system prompt first and keeps the cap, sampling and stop sequences; drops what chat cannot honour", () => {
    const chat = translate({
      system: [
        { type: "text", text: "Rule one." },
        { type: "text", text: "Rule two.", cache_control: { type: "ephemeral" } },
      ],
      temperature: 0.5,
      top_p: 0.9,
      top_k: 5,
      stop_sequences: ["a", "b", "c", "d", "e"],
      metadata: { user_id: "u1" },
      thinking: { type: "enabled", budget_tokens: 1024 },
      context_management: { edits: [] },
      output_config: { effort: "low" },
    });
    expect(chat).toEqual({
      model: "vendor-a/gpt-6-luna",
      messages: [
        { role: "system", content: "Rule one.\n\nRule two." },
        { role: "user", content: "hi" },
      ],
      max_tokens: 200,
      temperature: 0.5,
      top_p: 0.9,
      stop: ["a", "b", "c", "d"],
    });
  });

  it("keeps a system turn among the messages where it is, as a system message", () => {
    const chat = translate({
      messages: [
        { role: "user", content: "a" },
        { role: "system", content: [{ type: "text", text: "Now be formal." }] },
        { role: "user", content: "b" },
      ],
    });
    expect(chat.messages.map((message) => [message.role, message.content])).toEqual([
      ["user", "a"],
      ["system", "Now be formal."],
      ["user", "b"],
    ]);
  });

  it("asks a stream with its usage", () => {
    expect(translate({ stream: true })).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    expect(translate({ stream: false })).not.toHaveProperty("stream");
  });

  it("turns tool use and tool results into tool calls and tool messages, thinking passed back dropped", () => {
    const chat = translate({
      tools: [
        { name: "get_weather", description: "Weather", input_schema: { type: "object", properties: { city: {} } } },
        { type: "web_search_20250305", name: "web_search" },
      ],
      tool_choice: { type: "tool", name: "get_weather", disable_parallel_tool_use: true },
      messages: [
        { role: "user", content: "Weather in Paris and Rome?" },
        {
          role: "assistant",
          content: [
            { type: "thinking", thinking: "two calls", signature: "s" },
            { type: "text", text: "Checking." },
            { type: "tool_use", id: "toolu_a", name: "get_weather", input: { city: "Paris" } },
            { type: "tool_use", id: "toolu_b", name: "get_weather", input: { city: "Rome" } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "toolu_a", content: "18C" },
            {
              type: "tool_result",
              tool_use_id: "toolu_b",
              is_error: true,
              content: [
                { type: "text", text: "service down" },
                { type: "image", source: { type: "url", url: "https://example.com/map.png" } },
              ],
            },
            { type: "text", text: "Summarise." },
          ],
        },
      ],
    });
    expect(chat.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather",
          parameters: { type: "object", properties: { city: {} } },
        },
      },
    ]);
    expect(chat.tool_choice).toEqual({ type: "function", function: { name: "get_weather" } });
    expect(chat.parallel_tool_calls).toBe(false);
    expect(chat.messages).toEqual([
      { role: "user", content: "Weather in Paris and Rome?" },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          { id: "toolu_a", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
          { id: "toolu_b", type: "function", function: { name: "get_weather", arguments: '{"city":"Rome"}' } },
        ],
      },
      { role: "tool", tool_call_id: "toolu_a", content: "18C" },
      { role: "tool", tool_call_id: "toolu_b", content: "Error: service down" },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://example.com/map.png" } },
          { type: "text", text: "Summarise." },
        ],
      },
    ]);
  });

  it("makes a base64 image a data URL, and an assistant turn of tool calls alone null content", () => {
    const chat = translate({
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "look", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1" }] },
      ],
      tools: [{ name: "look", input_schema: { type: "object" } }],
    });
    expect(chat.messages).toEqual([
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } },
        ],
      },
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "t1", type: "function", function: { name: "look", arguments: "{}" } }],
      },
      { role: "tool", tool_call_id: "t1", content: "" },
    ]);
  });

  it("maps each tool choice, and sends neither tools nor a choice when no custom tool is left", () => {
    const tools = [{ name: "f", input_schema: { type: "object" } }];
    expect(translate({ tools, tool_choice: { type: "auto" } }).tool_choice).toBe("auto");
    expect(translate({ tools, tool_choice: { type: "any" } }).tool_choice).toBe("required");
    expect(translate({ tools, tool_choice: { type: "none" } }).tool_choice).toBe("none");
    expect(translate({ tools }).tool_choice).toBeUndefined();
    const serverOnly = translate({
      tools: [{ type: "web_fetch_20250910", name: "web_fetch" }],
      tool_choice: { type: "any" },
    });
    expect(serverOnly).not.toHaveProperty("tools");
    expect(serverOnly).not.toHaveProperty("tool_choice");
  });
});

describe("Claude Code's request, as recorded (e2e/__fixtures__/agents)", () => {
  it("is accepted and translated: system blocks and the system turn as system messages, every tool a function", () => {
    const [recorded] = JSON.parse(
      readFileSync(new URL("../../e2e/__fixtures__/agents/claude-code-messages-request.json", import.meta.url), "utf8"),
    ) as { body: { tools: unknown[]; max_tokens: number } }[];
    const parsed = parseMessagesRequest(recorded!.body, defaultCatalog());
    const chat = toChatRequest(parsed);
    expect(chat.messages.map((message) => message.role)).toEqual(["system", "user", "system"]);
    expect(chat.tools).toHaveLength(recorded!.body.tools.length);
    expect(chat).toMatchObject({
      max_tokens: recorded!.body.max_tokens,
      stream: true,
      stream_options: { include_usage: true },
    });
    for (const dropped of ["thinking", "context_management", "output_config", "metadata", "system"]) {
      expect(chat).not.toHaveProperty(dropped);
    }
  });
});
