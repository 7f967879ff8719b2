import type { ServerResponse } from "node:http";
import { writeSse } from "./recording-server";

type Usage = { input_tokens: number; output_tokens: number };

/**
 * The smallest Anthropic Messages stream Claude Code takes as a whole answer: without `message_stop` (or with an
 * `error` event) it counts the stream as failed and, unless told not to, asks again without streaming.
 * `message_start` carries the input tokens; `message_delta` the final output tokens, which Claude Code reports.
 */
export function writeAnthropicTextStream(response: ServerResponse, model: string, text: string, usage: Usage) {
  writeSse(response, [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id: "msg_canned",
          type: "message",
          role: "assistant",
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: usage.input_tokens, output_tokens: 1 },
        },
      },
    },
    {
      event: "content_block_start",
      data: { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
    },
    { event: "ping", data: { type: "ping" } },
    {
      event: "content_block_delta",
      data: { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
    },
    { event: "content_block_stop", data: { type: "content_block_stop", index: 0 } },
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: usage.output_tokens },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  ]);
}

/**
 * A Responses stream as OpenAI sends it for one text message. Codex reads the answer from
 * `response.output_item.done` (not from `response.completed`'s `output`), takes the usage from `response.completed`,
 * and fails the turn ("stream closed before response.completed") when that event never comes.
 */
export function writeResponsesTextStream(response: ServerResponse, model: string, text: string, usage: Usage) {
  const base = { id: "resp_canned", object: "response", created_at: 1_800_000_000, model };
  const message = {
    id: "msg_canned",
    type: "message",
    role: "assistant",
    status: "completed",
    content: [{ type: "output_text", text, annotations: [] }],
  };
  const total = { ...usage, total_tokens: usage.input_tokens + usage.output_tokens };
  writeSse(response, [
    {
      event: "response.created",
      data: { type: "response.created", response: { ...base, status: "in_progress", output: [] } },
    },
    {
      event: "response.output_item.added",
      data: {
        type: "response.output_item.added",
        output_index: 0,
        item: { ...message, status: "in_progress", content: [] },
      },
    },
    {
      event: "response.output_text.delta",
      data: { type: "response.output_text.delta", item_id: message.id, output_index: 0, content_index: 0, delta: text },
    },
    { event: "response.output_item.done", data: { type: "response.output_item.done", output_index: 0, item: message } },
    {
      event: "response.completed",
      data: { type: "response.completed", response: { ...base, status: "completed", output: [message], usage: total } },
    },
  ]);
}
