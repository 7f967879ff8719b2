import { describe, expect, it } from "vitest";
import { SseEvent } from "../http/event-stream";
import { MessagesStreamEncoder } from "./messages-stream";

const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
  new SseEvent(
    JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }),
  );
const usageChunk = (usage: Record<string, unknown>) => new SseEvent(JSON.stringify({ choices: [], usage }));
const done = () => new SseEvent("[DONE]");

/** The encoder's events for canonical events, as [name, data] pairs (the name must equal the data's type). */
function encode(events: SseEvent[], options = { model: "claude-x", inputTokens: 11 }) {
  const encoder = new MessagesStreamEncoder(options);
  const out = [...events.flatMap((event) => encoder.push(event)), ...encoder.end()];
  return out.map((event) => {
    const json = event.json() as { type: string };
    expect(event.text()).toMatch(new RegExp(`^event: ${json?.type}\\ndata: `));
    return json;
  });
}

describe("MessagesStreamEncoder", () => {
  it("writes each further piece of an open text block as the object it stands for, whatever its characters", () => {
    const hard = ['say "hi"\n', "\\ and \u2028 and 🙂", "</script>", "\u0000\t"];
    const events = encode([chunk({ content: "first" }), ...hard.map((content) => chunk({ content })), done()]);
    const deltas = events.filter((event) => event.type === "content_block_delta");
    expect(deltas).toEqual(
      ["first", ...hard].map((text) => ({
        type: "content_block_delta",
        index: 0,
        delta: { type: "text_delta", text },
      })),
    );
  });

  it("streams text as one text block, then message_delta with the usage and cost, and message_stop at [DONE]", () => {
    const events = encode([
      chunk({ role: "assistant", content: "" }),
      chunk({ content: "Hel" }),
      chunk({ content: "lo" }),
      chunk({}, "stop"),
      usageChunk({
        prompt_tokens: 11,
        completion_tokens: 2,
        total_tokens: 13,
        cost: "0.01",
        prepaid_charged_tokens: 13,
      }),
      done(),
    ]);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    expect(events[0]).toMatchObject({
      message: {
        type: "message",
        role: "assistant",
        model: "claude-x",
        content: [],
        stop_reason: null,
        usage: { input_tokens: 11, output_tokens: 0 },
      },
    });
    expect(events[2]).toEqual({ type: "content_block_start", index: 0, content_block: { type: "text", text: "" } });
    expect(events[3]).toEqual({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hel" } });
    expect(events[6]).toEqual({
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: {
        input_tokens: 11,
        output_tokens: 2,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        cost: "0.01",
        prepaid_charged_tokens: 13,
      },
    });
  });

  it("streams reasoning as a thinking block, then each tool call as a tool_use block with input_json_delta", () => {
    const events = encode([
      chunk({ reasoning_content: "think" }),
      chunk({ content: "Calling." }),
      chunk({ tool_calls: [{ index: 0, id: "call_a", type: "function", function: { name: "f", arguments: "" } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"x":' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: "1}" } }] }),
      chunk({ tool_calls: [{ index: 1, id: "call_b", function: { name: "g", arguments: "{}" } }] }),
      chunk({}, "tool_calls"),
      usageChunk({ prompt_tokens: 5, completion_tokens: 9 }),
      done(),
    ]);
    const blocks = events.filter((event) => event.type.startsWith("content_block"));
    expect(blocks).toEqual([
      { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: "think" } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Calling." } },
      { type: "content_block_stop", index: 1 },
      {
        type: "content_block_start",
        index: 2,
        content_block: { type: "tool_use", id: "call_a", name: "f", input: {} },
      },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: '{"x":' } },
      { type: "content_block_delta", index: 2, delta: { type: "input_json_delta", partial_json: "1}" } },
      { type: "content_block_stop", index: 2 },
      {
        type: "content_block_start",
        index: 3,
        content_block: { type: "tool_use", id: "call_b", name: "g", input: {} },
      },
      { type: "content_block_delta", index: 3, delta: { type: "input_json_delta", partial_json: "{}" } },
      { type: "content_block_stop", index: 3 },
    ]);
    expect(events.at(-2)).toMatchObject({ type: "message_delta", delta: { stop_reason: "tool_use" } });
  });

  it("gives max_tokens for a cut answer, and message_delta at [DONE] when no usage came", () => {
    const events = encode([chunk({ content: "a" }), chunk({}, "length"), done()]);
    expect(events.slice(-2)).toEqual([
      {
        type: "message_delta",
        delta: { stop_reason: "max_tokens", stop_sequence: null },
        usage: { input_tokens: 11, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      },
      { type: "message_stop" },
    ]);
  });

  it("ends with Anthropic's error event for a canonical error, and nothing after it", () => {
    const error = new SseEvent(
      JSON.stringify({ error: { message: "Settlement failed", type: "payment_error", code: "settlement_failed" } }),
    );
    const events = encode([chunk({ content: "a" }), error, chunk({ content: "b" }), done()]);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "ping",
      "content_block_start",
      "content_block_delta",
      "error",
    ]);
    expect(events.at(-1)).toEqual({ type: "error", error: { type: "billing_error", message: "Settlement failed" } });
  });

  it("makes billing's own error event (made, not received) Anthropic's", () => {
    const made = SseEvent.of({ error: { message: "Payment expired", type: "payment_error", code: "payment_expired" } });
    expect(encode([chunk({ content: "a" }), made]).at(-1)).toEqual({
      type: "error",
      error: { type: "billing_error", message: "Payment expired" },
    });
  });

  it("fails a stream that ends before its answer finished, or sends what is not JSON", () => {
    expect(encode([chunk({ content: "a" })]).at(-1)).toEqual({
      type: "error",
      error: { type: "api_error", message: "the stream ended before the answer was complete" },
    });
    expect(encode([new SseEvent("{oops")]).at(-1)).toMatchObject({ type: "error" });
  });

  it("passes keep-alive comments as they came", () => {
    const encoder = new MessagesStreamEncoder({ model: "m" });
    const comment = new SseEvent(undefined, undefined, ": PROCESSING\n\n");
    expect(encoder.push(comment).map((event) => event.text())).toEqual([": PROCESSING\n\n"]);
  });
});
