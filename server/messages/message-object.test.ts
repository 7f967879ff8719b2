import { describe, expect, it } from "vitest";
import { messageFromChatCompletion, messagesUsage, stopReason, toolInput } from "./message-object";

describe("messageFromChatCompletion", () => {
  it("gives text and tool_use blocks, the stop reason, and the usage with the cost billing appended", () => {
    const message = messageFromChatCompletion(
      {
        id: "chatcmpl-1",
        object: "chat.completion",
        choices: [
          {
            index: 0,
            message: {
              role: "assistant",
              content: "Let me look.",
              reasoning_content: "hidden",
              tool_calls: [
                { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
                { id: "call_2", type: "function", function: { name: "broken", arguments: '{"city":' } },
              ],
            },
            finish_reason: "tool_calls",
          },
        ],
        usage: {
          prompt_tokens: 12,
          completion_tokens: 7,
          total_tokens: 19,
          cost: "0.000123",
          cost_details: { network: "eip155:84532", transaction: "0xabc" },
        },
      },
      "claude-sonnet-4-5",
    );
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content: [
        { type: "text", text: "Let me look." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Paris" } },
        { type: "tool_use", id: "call_2", name: "broken", input: {} },
      ],
      stop_reason: "tool_use",
      stop_sequence: null,
      usage: {
        input_tokens: 12,
        output_tokens: 7,
        cost: "0.000123",
        cost_details: { network: "eip155:84532", transaction: "0xabc" },
      },
    });
    expect(message.id).toMatch(/^msg_01\w{24}$/);
    expect(message.usage).not.toHaveProperty("total_tokens");
  });

  it("gives an empty content for an empty answer, and zero usage when none was reported", () => {
    const message = messageFromChatCompletion({ choices: [{ message: { content: "" }, finish_reason: "stop" }] }, "m");
    expect(message).toMatchObject({
      content: [],
      stop_reason: "end_turn",
      usage: { input_tokens: 0, output_tokens: 0 },
    });
  });
});

describe("stopReason", () => {
  it("maps every chat finish reason", () => {
    expect(["stop", "length", "tool_calls", "content_filter", null].map(stopReason)).toEqual([
      "end_turn",
      "max_tokens",
      "tool_use",
      "refusal",
      "end_turn",
    ]);
  });
});

describe("toolInput and messagesUsage", () => {
  it("read arguments that are not an object as {}, and prepaid cost fields as they are", () => {
    expect([toolInput(""), toolInput("[1]"), toolInput("null"), toolInput('{"a":1}')]).toEqual([{}, {}, {}, { a: 1 }]);
    const usage = {
      prompt_tokens: 3,
      completion_tokens: 4,
      cost: "0.1",
      prepaid_charged_tokens: 7,
      prepaid_remaining_tokens: 93,
    };
    expect(messagesUsage(usage)).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      cost: "0.1",
      prepaid_charged_tokens: 7,
      prepaid_remaining_tokens: 93,
    });
  });
});
