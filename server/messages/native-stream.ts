import { eachEvent, SseEvent, type EventStream } from "../http/event-stream";
import { isComment } from "./message-object";
import { costFieldsOf as costFields, type ChatChunk, type ChatUsage } from "../chat/chat-wire";
import type { ChatFinishReason } from "./native-message";
import { messagesStreamError } from "./messages-error";
import { chatUsageOf, finishReasonOf } from "./native-message";

/**
 * A route that speaks Messages natively: its event stream read into the canonical chunk stream that billing meters
 * (decodeNativeStream), and written back as it came (encodeNativeStream).
 *
 * How the native events travel: each native event is attached to exactly one canonical event, in a side table
 * keyed by the canonical SseEvent object (a WeakMap: no field is added to SseEvent, and billing's stages change
 * events in place, so the attachment survives them). A native event with no canonical meaning (ping,
 * content_block_start of a text block, content_block_stop, signature deltas) rides on a carrier: a canonical event
 * with no data and no text, which every canonical stage passes over and which writes nothing if it ever reached a
 * caller. The encoder writes each canonical event's native events unchanged, except message_delta, which rides on
 * the canonical usage chunk and gets that chunk's cost fields (appended by billing) in its usage; a canonical event
 * with none attached is billing's own (an error, which becomes Anthropic's error event) or a keep-alive comment.
 */

const nativeEvents = new WeakMap<SseEvent, SseEvent[]>();

/** The native events attached to a canonical event (none when billing or the canonical stream made it). */
export function nativeEventsOf(canonical: SseEvent): readonly SseEvent[] | undefined {
  return nativeEvents.get(canonical);
}

/** A canonical event carrying `native`. */
function carrying(canonical: SseEvent, native: SseEvent): SseEvent {
  nativeEvents.set(canonical, [native]);
  return canonical;
}

/** A canonical event that carries a native event and means nothing canonically. */
function carrier(native: SseEvent): SseEvent {
  return carrying(new SseEvent(undefined, undefined, ""), native);
}

interface NativeEvent {
  type?: unknown;
  index?: unknown;
  message?: { id?: unknown; model?: unknown; usage?: unknown };
  content_block?: { type?: unknown; id?: unknown; name?: unknown };
  delta?: { type?: unknown; text?: unknown; partial_json?: unknown; thinking?: unknown; stop_reason?: unknown };
  usage?: unknown;
  error?: { type?: unknown; message?: unknown };
}

/** Reads native Messages events into canonical chunks, each native event attached to one (see above). */
export class NativeStreamDecoder {
  private id = "";
  private model = "";
  private inputTokens: number | undefined;
  /** Tool call index by content block index: chat numbers the calls, Anthropic the blocks. */
  private readonly toolIndexes = new Map<number, number>();

  private chunk(fields: Omit<ChatChunk, "id" | "object" | "model">): SseEvent {
    return SseEvent.of({ id: this.id, object: "chat.completion.chunk", model: this.model, ...fields });
  }

  private delta(delta: NonNullable<NonNullable<ChatChunk["choices"]>[number]["delta"]>): SseEvent {
    return this.chunk({ choices: [{ index: 0, delta, finish_reason: null }] });
  }

  /** The canonical events for one native event; a comment passes as it came. */
  push(native: SseEvent): SseEvent[] {
    if (isComment(native)) return [native];
    const event = native.json() as NativeEvent | undefined;
    switch (event?.type) {
      case "message_start": {
        const message = event.message ?? {};
        this.id = typeof message.id === "string" ? message.id : "";
        this.model = typeof message.model === "string" ? message.model : "";
        this.inputTokens = chatUsageOf({ output_tokens: 0, ...(message.usage as object) })?.prompt_tokens;
        return [carrying(this.delta({ role: "assistant", content: "" }), native)];
      }
      case "content_block_start":
        return [this.blockStart(event, native)];
      case "content_block_delta":
        return [this.blockDelta(event, native)];
      case "message_delta": {
        const finish: ChatFinishReason = finishReasonOf(event.delta?.stop_reason);
        const usage: ChatUsage | undefined = chatUsageOf(event.usage, this.inputTokens);
        const finished = this.chunk({ choices: [{ index: 0, delta: {}, finish_reason: finish }] });
        if (!usage) return [carrying(finished, native)];
        return [finished, carrying(this.chunk({ choices: [], usage }), native)];
      }
      case "message_stop":
        return [carrying(new SseEvent("[DONE]"), native)];
      case "error": {
        const message = typeof event.error?.message === "string" ? event.error.message : "the provider's stream failed";
        const error = { message, type: "upstream_error", param: null, code: "upstream_error" };
        return [carrying(SseEvent.of({ error }), native)];
      }
      default:
        return [carrier(native)];
    }
  }

  private blockStart(event: NativeEvent, native: SseEvent): SseEvent {
    const block = event.content_block;
    if (block?.type !== "tool_use" || typeof event.index !== "number") return carrier(native);
    const index = this.toolIndexes.size;
    this.toolIndexes.set(event.index, index);
    const call = { index, id: String(block.id ?? ""), type: "function" as const };
    return carrying(
      this.delta({ tool_calls: [{ ...call, function: { name: String(block.name ?? ""), arguments: "" } }] }),
      native,
    );
  }

  private blockDelta(event: NativeEvent, native: SseEvent): SseEvent {
    const delta = event.delta;
    if (delta?.type === "text_delta" && typeof delta.text === "string") {
      return carrying(this.delta({ content: delta.text }), native);
    }
    if (delta?.type === "thinking_delta" && typeof delta.thinking === "string") {
      return carrying(this.delta({ reasoning_content: delta.thinking }), native);
    }
    const toolIndex = typeof event.index === "number" ? this.toolIndexes.get(event.index) : undefined;
    if (delta?.type === "input_json_delta" && typeof delta.partial_json === "string" && toolIndex !== undefined) {
      return carrying(
        this.delta({ tool_calls: [{ index: toolIndex, function: { arguments: delta.partial_json } }] }),
        native,
      );
    }
    return carrier(native);
  }
}

/** The canonical chunk stream of a native Messages event stream (NativeStreamDecoder). */
export function decodeNativeStream(source: EventStream): EventStream {
  const decoder = new NativeStreamDecoder();
  return eachEvent(source, (event) => decoder.push(event));
}

/** Names the sold model in a native message_start (the route's provider id, or a dated version, otherwise). */
function withSoldModel(native: SseEvent, soldModel: string): void {
  const json = native.json();
  const message = json?.type === "message_start" ? (json.message as Record<string, unknown> | undefined) : undefined;
  if (message === undefined || message.model === soldModel) return;
  message.model = soldModel;
  native.changed();
}

/**
 * The native events to write for one canonical event (see above), message_start naming `soldModel` (the id the
 * caller bought) when given.
 */
export function encodeNativeEvent(canonical: SseEvent, soldModel?: string): SseEvent[] {
  const natives = nativeEventsOf(canonical);
  if (natives === undefined) {
    if (isComment(canonical)) return [canonical];
    const error = (canonical.json() as ChatChunk | undefined)?.error;
    return error ? [messagesStreamError(error)] : [];
  }
  if (soldModel !== undefined) for (const native of natives) withSoldModel(native, soldModel);
  const usage = (canonical.json() as ChatChunk | undefined)?.usage;
  const cost = costFields(usage);
  if (usage && Object.keys(cost).length > 0) {
    for (const native of natives) {
      const json = native.json();
      const nativeUsage = json?.type === "message_delta" ? json.usage : undefined;
      if (typeof nativeUsage !== "object" || nativeUsage === null) continue;
      Object.assign(nativeUsage, cost);
      native.changed();
    }
  }
  return [...natives];
}

/** The native Messages stream back from a (metered) canonical stream decoded by decodeNativeStream. */
export function encodeNativeStream(source: EventStream, soldModel?: string): EventStream {
  return eachEvent(source, (event) => encodeNativeEvent(event, soldModel));
}
