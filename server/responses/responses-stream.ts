import { SseEvent } from "../http/event-stream";
import {
  callItem,
  customInput,
  messageItem,
  newId,
  responseObject,
  usageFromChat,
  type AnsweredRequest,
  type OutputItem,
  type ResponseUsage,
} from "./response-object";
import type { ChatChunk, ChatToolCallDelta } from "../chat/chat-wire";

/**
 * Turns the canonical chat stream (chat/chat-wire.ts: chunks, the usage-only chunk with its cost, `[DONE]` once
 * paid) into the Responses event sequence, one event per delta, as they arrive: created, in_progress, output items
 * and their deltas, their done events, completed (with the usage and its cost), [DONE]. Chat's error event becomes
 * the Responses error event, with its code (a provider's failure is `upstream_error`).
 */
export class ResponsesEventTranslator {
  private sequence = 0;
  private readonly id = newId("resp");
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private readonly output: OutputItem[] = [];
  private messageIndex: number | undefined;
  private readonly callIndexes = new Map<number, number>();
  /** The chat arguments of custom tools' calls, by output index: their input is read from them at the end. */
  private readonly customArguments = new Map<number, string>();
  private usage: ResponseUsage | undefined;
  private finishReason: string | undefined;
  private ended = false;

  constructor(private readonly parsed: AnsweredRequest) {}

  private event(type: string, fields: Record<string, unknown>): SseEvent {
    return SseEvent.of({ type, sequence_number: this.sequence++, ...fields }, type);
  }

  /**
   * A delta event, one per upstream delta: its data written straight as the text `event` would write (the same keys
   * in the same order), without an object to build and stringify per delta.
   */
  private deltaEvent(
    type: "response.output_text.delta" | "response.function_call_arguments.delta",
    itemId: string,
    outputIndex: number,
    delta: string,
  ): SseEvent {
    const contentIndex = type === "response.output_text.delta" ? ',"content_index":0' : "";
    const data = `{"type":"${type}","sequence_number":${this.sequence++},"item_id":${JSON.stringify(itemId)},"output_index":${outputIndex}${contentIndex},"delta":${JSON.stringify(delta)}}`;
    return SseEvent.ofJsonText(data, type);
  }

  private snapshot(status: "in_progress" | "completed"): Record<string, unknown> {
    return responseObject({
      id: this.id,
      createdAt: this.createdAt,
      parsed: this.parsed,
      status,
      output: this.output,
      usage: status === "completed" ? this.usage : undefined,
      truncated: this.finishReason === "length",
    });
  }

  start(): SseEvent[] {
    const response = this.snapshot("in_progress");
    return [this.event("response.created", { response }), this.event("response.in_progress", { response })];
  }

  private openMessage(events: SseEvent[]): number {
    if (this.messageIndex !== undefined) return this.messageIndex;
    const item = messageItem("", "in_progress");
    const emptyItem = { ...item, content: [] };
    this.messageIndex = this.output.push(item) - 1;
    events.push(this.event("response.output_item.added", { output_index: this.messageIndex, item: emptyItem }));
    events.push(
      this.event("response.content_part.added", {
        item_id: item.id,
        output_index: this.messageIndex,
        content_index: 0,
        part: { type: "output_text", text: "", annotations: [] },
      }),
    );
    return this.messageIndex;
  }

  /** Events for one canonical event (a chat chunk, or [DONE]; comments and events without data yield none). */
  push(upstream: SseEvent): SseEvent[] {
    if (this.ended || upstream.data === undefined) return [];
    if (upstream.data === "[DONE]") return this.finish();
    const chunk = upstream.json() as ChatChunk | undefined;
    if (chunk === undefined) return this.fail("upstream sent an event that is not JSON");
    if (chunk.error) return this.fail(chunk.error.message ?? "upstream stream failed", chunk.error.code ?? undefined);
    const events: SseEvent[] = [];
    if (chunk.usage) this.usage = usageFromChat(chunk.usage);
    const choice = chunk.choices?.[0];
    const content = choice?.delta?.content;
    if (typeof content === "string" && content.length > 0) {
      const index = this.openMessage(events);
      const item = this.output[index] as Extract<OutputItem, { type: "message" }>;
      item.content[0]!.text += content;
      events.push(this.deltaEvent("response.output_text.delta", item.id, index, content));
    }
    for (const call of choice?.delta?.tool_calls ?? []) events.push(...this.toolCallDelta(call));
    if (choice?.finish_reason) this.finishReason = choice.finish_reason;
    return events;
  }

  private toolCallDelta(call: ChatToolCallDelta): SseEvent[] {
    const events: SseEvent[] = [];
    const upstreamIndex = call.index ?? 0;
    let index = this.callIndexes.get(upstreamIndex);
    if (index === undefined) {
      const name = call.function?.name ?? "";
      const item = callItem(this.parsed, { id: call.id ?? newId("fc"), name, arguments: "" }, "in_progress");
      index = this.output.push(item) - 1;
      this.callIndexes.set(upstreamIndex, index);
      if (item.type === "custom_tool_call") this.customArguments.set(index, "");
      events.push(this.event("response.output_item.added", { output_index: index, item: { ...item } }));
    }
    const item = this.output[index]!;
    const delta = call.function?.arguments ?? "";
    if (item.type === "custom_tool_call") {
      // Its input is a string inside the chat arguments' JSON: read whole at the end.
      this.customArguments.set(index, (this.customArguments.get(index) ?? "") + delta);
    } else if (item.type === "function_call" && delta) {
      item.arguments += delta;
      events.push(this.deltaEvent("response.function_call_arguments.delta", item.id, index, delta));
    }
    return events;
  }

  /** Closes every open item and completes the response. */
  finish(): SseEvent[] {
    if (this.ended) return [];
    const events: SseEvent[] = [];
    if (this.output.length === 0) this.openMessage(events);
    for (const [index, item] of this.output.entries()) {
      item.status = "completed";
      if (item.type === "message") {
        const part = item.content[0]!;
        events.push(
          this.event("response.output_text.done", {
            item_id: item.id,
            output_index: index,
            content_index: 0,
            text: part.text,
          }),
        );
        events.push(
          this.event("response.content_part.done", { item_id: item.id, output_index: index, content_index: 0, part }),
        );
      } else if (item.type === "custom_tool_call") {
        item.input = customInput(this.customArguments.get(index) ?? "");
        events.push(
          this.event("response.custom_tool_call_input.done", {
            item_id: item.id,
            output_index: index,
            input: item.input,
          }),
        );
      } else {
        events.push(
          this.event("response.function_call_arguments.done", {
            item_id: item.id,
            output_index: index,
            arguments: item.arguments,
          }),
        );
      }
      events.push(this.event("response.output_item.done", { output_index: index, item }));
    }
    events.push(this.event("response.completed", { response: this.snapshot("completed") }));
    this.ended = true;
    return [...events, new SseEvent("[DONE]")];
  }

  /** Ends the stream with an error event; no [DONE] follows, so no client mistakes it for a complete answer. */
  fail(message: string, code = "upstream_error"): SseEvent[] {
    if (this.ended) return [];
    this.ended = true;
    return [this.event("error", { code, message, param: null })];
  }

  /** The upstream closed: complete if it had finished its answer, else fail. */
  end(): SseEvent[] {
    if (this.ended) return [];
    return this.finishReason ? this.finish() : this.fail("upstream stream ended before the answer was complete");
  }
}
