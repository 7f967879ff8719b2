import { mapEvents, SseEvent, type EventStream } from "../http/event-stream";
import { isComment } from "./message-object";
import { type ChatChunk, type ChatToolCallDelta, type ChatUsage } from "../chat/chat-wire";
import { messagesUsage, newMessagesId, stopReason } from "./message-object";
import { messagesStreamError } from "./messages-error";

export interface MessagesStreamOptions {
  /** The model the caller asked for, named in message_start. */
  model: string;
  /** The input tokens the quote counted, for message_start (0 when unknown); message_delta states the reported. */
  inputTokens?: number;
}

type Block = { index: number; kind: "text" | "thinking" | "tool_use" };

/**
 * Turns a canonical chat chunk stream into Anthropic's Messages events, one delta per canonical delta, as they
 * arrive: message_start and ping first; text as a text block (text_delta), reasoning as a thinking block
 * (thinking_delta), each tool call as a tool_use block whose arguments stream as input_json_delta; message_delta
 * with the stop reason and the final usage (the cost fields billing appended to the canonical usage included) when
 * the usage chunk comes, message_stop when [DONE] does ([DONE] itself has no Messages form). A canonical error
 * event becomes `event: error`, which ends the stream.
 */
export class MessagesStreamEncoder {
  private readonly id = newMessagesId("msg");
  private started = false;
  private ended = false;
  private open: Block | undefined;
  private nextIndex = 0;
  private readonly toolBlocks = new Map<number, Block>();
  private finishReason: string | undefined;
  private usage: ChatUsage | undefined;
  private deltaSent = false;

  constructor(private readonly options: MessagesStreamOptions) {}

  private static event(json: Record<string, unknown>): SseEvent {
    return SseEvent.of(json, json.type as string);
  }

  /** message_start (with the input the quote counted, no output yet) and a ping; once. */
  start(): SseEvent[] {
    if (this.started) return [];
    this.started = true;
    const message = {
      id: this.id,
      type: "message",
      role: "assistant",
      model: this.options.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: this.options.inputTokens ?? 0,
        output_tokens: 0,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
      },
    };
    const { event } = MessagesStreamEncoder;
    return [event({ type: "message_start", message }), event({ type: "ping" })];
  }

  /** The events for one canonical event; a comment (a keep-alive) passes as it came. */
  push(canonical: SseEvent): SseEvent[] {
    if (this.ended) return [];
    if (isComment(canonical)) return [canonical];
    const events = this.start();
    if (canonical.data === "[DONE]") return [...events, ...this.finish()];
    const chunk = canonical.json() as ChatChunk | undefined;
    if (chunk === undefined)
      return [...events, ...this.fail({ message: "the provider sent an event that is not JSON" })];
    if (chunk.error) return [...events, ...this.fail(chunk.error)];
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    // Most events: one more piece of the open text block, written with no object to stringify.
    const text = delta?.content;
    if (
      this.open?.kind === "text" &&
      typeof text === "string" &&
      text !== "" &&
      !delta!.reasoning_content &&
      !delta!.tool_calls?.length &&
      !choice!.finish_reason &&
      !chunk.usage
    ) {
      events.push(textDelta(this.open.index, text));
      return events;
    }
    if (typeof delta?.reasoning_content === "string" && delta.reasoning_content !== "") {
      events.push(...this.delta("thinking", { type: "thinking_delta", thinking: delta.reasoning_content }));
    }
    if (typeof delta?.content === "string" && delta.content !== "") {
      events.push(...this.delta("text", { type: "text_delta", text: delta.content }));
    }
    for (const call of delta?.tool_calls ?? []) events.push(...this.toolCallDelta(call));
    if (choice?.finish_reason) this.finishReason = choice.finish_reason;
    if (chunk.usage && (chunk.choices === undefined || chunk.choices.length === 0)) {
      this.usage = chunk.usage;
      events.push(...this.messageDelta());
    }
    return events;
  }

  /** Opens a block of `kind` unless one is open (closing another kind's), and adds a delta to it. */
  private delta(kind: "text" | "thinking", delta: Record<string, unknown>): SseEvent[] {
    const events: SseEvent[] = [];
    if (this.open?.kind !== kind) {
      events.push(...this.close());
      this.open = { index: this.nextIndex++, kind };
      const block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "", signature: "" };
      events.push(
        MessagesStreamEncoder.event({ type: "content_block_start", index: this.open.index, content_block: block }),
      );
    }
    events.push(MessagesStreamEncoder.event({ type: "content_block_delta", index: this.open.index, delta }));
    return events;
  }

  /** A tool call's first delta opens its tool_use block; its arguments stream as input_json_delta. */
  private toolCallDelta(call: ChatToolCallDelta): SseEvent[] {
    const events: SseEvent[] = [];
    const callIndex = call.index ?? 0;
    let block = this.toolBlocks.get(callIndex);
    if (block === undefined) {
      events.push(...this.close());
      block = { index: this.nextIndex++, kind: "tool_use" };
      this.toolBlocks.set(callIndex, block);
      this.open = block;
      const contentBlock = {
        type: "tool_use",
        id: call.id || newMessagesId("toolu"),
        name: call.function?.name ?? "",
        input: {},
      };
      events.push(
        MessagesStreamEncoder.event({ type: "content_block_start", index: block.index, content_block: contentBlock }),
      );
    }
    const partial = call.function?.arguments;
    if (partial) {
      const delta = { type: "input_json_delta", partial_json: partial };
      events.push(MessagesStreamEncoder.event({ type: "content_block_delta", index: block.index, delta }));
    }
    return events;
  }

  private close(): SseEvent[] {
    if (this.open === undefined) return [];
    const index = this.open.index;
    this.open = undefined;
    return [MessagesStreamEncoder.event({ type: "content_block_stop", index })];
  }

  /** The open block's stop, and message_delta with the stop reason and the usage known; once. */
  private messageDelta(): SseEvent[] {
    if (this.deltaSent) return [];
    this.deltaSent = true;
    const usage = messagesUsage(this.usage, this.options.inputTokens);
    return [
      ...this.close(),
      MessagesStreamEncoder.event({
        type: "message_delta",
        delta: { stop_reason: stopReason(this.finishReason), stop_sequence: null },
        usage,
      }),
    ];
  }

  /** The canonical end ([DONE]): message_delta if the usage chunk did not bring it, and message_stop. */
  finish(): SseEvent[] {
    if (this.ended) return [];
    const events = [...this.start(), ...this.messageDelta()];
    this.ended = true;
    return [...events, MessagesStreamEncoder.event({ type: "message_stop" })];
  }

  /** Ends the stream with an error event (Anthropic's, typed from the canonical error); no message_stop follows. */
  fail(error: { message?: unknown; type?: unknown; code?: unknown }): SseEvent[] {
    if (this.ended) return [];
    this.ended = true;
    return [messagesStreamError(error)];
  }

  /** The canonical stream closed: complete if the answer had finished, else fail. */
  end(): SseEvent[] {
    if (this.ended) return [];
    if (this.finishReason !== undefined || this.deltaSent) return this.finish();
    return [
      ...this.start(),
      ...this.fail({ message: "the stream ended before the answer was complete", code: "upstream_error" }),
    ];
  }
}

/** A content_block_delta of text: the JSON `MessagesStreamEncoder.event` would write, written at once. */
function textDelta(index: number, text: string): SseEvent {
  const data = `{"type":"content_block_delta","index":${index},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}`;
  return SseEvent.ofJsonText(data, "content_block_delta");
}

/** The Messages event stream of a canonical chat chunk stream (see MessagesStreamEncoder). */
export function encodeMessagesStream(source: EventStream, options: MessagesStreamOptions): EventStream {
  const encoder = new MessagesStreamEncoder(options);
  const nonEmpty = (events: SseEvent[]) => (events.length > 0 ? events : undefined);
  return mapEvents(
    source,
    (batch) => nonEmpty(batch.flatMap((event) => encoder.push(event))),
    () => nonEmpty(encoder.end()),
  );
}
