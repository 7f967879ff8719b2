import { costFieldsOf, type ChatCompletion, type ChatUsage } from "../chat/chat-wire";
import { nativeOf } from "../dialects/dialect";
import { mapEvents, SseEvent, type EventStream } from "../http/event-stream";
import { fromChatCompletion } from "./response-object";
import type { ResponsesCall } from "./responses-request";
import { ResponsesEventTranslator } from "./responses-stream";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A native Response (or a Response event's `response`) naming the sold model, its usage stating the cost. */
function stated(response: Json, soldId: string, usage: ChatUsage | null | undefined): Json {
  const native = isRecord(response.usage) ? response.usage : {};
  return { ...response, model: soldId, ...(usage ? { usage: { ...native, ...costFieldsOf(usage) } } : {}) };
}

/** A whole answer: the native Response as it came (cost stated, sold model named), or the translated one. */
export function encodeResponse(parsed: ResponsesCall, completion: ChatCompletion): unknown {
  const native = nativeOf(completion);
  if (isRecord(native)) return stated(native, parsed.model.id, completion.usage);
  return fromChatCompletion(parsed, completion);
}

/** An event with data (one received, or one made here from JSON), not a comment alone. */
const hasData = (event: SseEvent) => event.data !== undefined || event.json() !== undefined;

function carriesNative(event: SseEvent): boolean {
  const json = event.json();
  return nativeOf(event) !== undefined || (json !== undefined && nativeOf(json) !== undefined);
}

/**
 * A streamed answer: a native route's events passed on as they came (each Response in them naming the sold model,
 * `response.completed` stating the cost in its usage and held until the canonical end, which waits for the
 * payment), or the canonical chat stream translated to Responses events. Which one is told by the first event.
 */
export function encodeResponsesStream(canonical: EventStream, parsed: ResponsesCall): EventStream {
  const translator = new ResponsesEventTranslator(parsed);
  let started: SseEvent[] | undefined;
  let isNative: boolean | undefined;
  let held: SseEvent | undefined;
  const passNative = (event: SseEvent): SseEvent[] => {
    if (event.data === "[DONE]") {
      const end = held ? [held, new SseEvent("[DONE]")] : [new SseEvent("[DONE]")];
      held = undefined;
      return end;
    }
    const json = event.json();
    const native = nativeOf(event) ?? (json ? nativeOf(json) : undefined);
    if (!isRecord(native)) {
      // An event of billing's own: its failure, written as the Responses error event.
      if (isRecord(json?.error)) {
        held = undefined;
        const { message, code } = json.error;
        return translator.fail(String(message ?? "stream failed"), typeof code === "string" ? code : undefined);
      }
      return hasData(event) ? [] : [event];
    }
    const out = isRecord(native.response)
      ? { ...native, response: stated(native.response, parsed.model.id, (json?.usage as ChatUsage) ?? undefined) }
      : native;
    const written = SseEvent.of(out, typeof native.type === "string" ? native.type : undefined);
    if (native.type === "response.completed" || native.type === "response.incomplete") {
      held = written;
      return [];
    }
    return [written];
  };
  return mapEvents(
    canonical,
    (batch) => {
      if (isNative === undefined) {
        const first = batch.find(hasData);
        if (first) isNative = carriesNative(first);
      }
      // Loops, not flatMap: this runs once per delta, and flatMap cost about 0.7 us a call.
      const events: SseEvent[] = [];
      if (isNative) {
        for (const event of batch) for (const out of passNative(event)) events.push(out);
        return events.length > 0 ? events : undefined;
      }
      started ??= translator.start();
      // The first events go out with the first batch (the upstream has one by now).
      if (started.length > 0) events.push(...started.splice(0));
      for (const event of batch) for (const out of translator.push(event)) events.push(out);
      return events.length > 0 ? events : undefined;
    },
    () => {
      // A native stream cut before its end: billing has said why; its held completion is not the answer.
      if (isNative) return undefined;
      const events = [...(started ?? translator.start()).splice(0), ...translator.end()];
      return events.length > 0 ? events : undefined;
    },
  );
}
