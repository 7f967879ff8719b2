import type { EventStream, SseEvent } from "../http/event-stream";
import { logEvent } from "../core/log";
import { finalUsageOf, noteUsage } from "./answer-cost";
import type { CallTrace } from "../tracing/call-trace";

/** The fields to append to a stream's final usage object; undefined leaves the event as it was. */
export type UsageCostFields = (
  usage: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;

/**
 * Whether an event may hold a usage object: one made here may; one received may when its data has `"usage"`
 * followed by an object, not by null (which OpenAI puts in every chunk).
 */
function mayHoldUsage({ data }: SseEvent): boolean {
  if (data === undefined) return true;
  for (let at = data.indexOf('"usage"'); at >= 0; at = data.indexOf('"usage"', at + 1)) {
    let next = at + 7;
    while (data[next] === " " || data[next] === ":") next++;
    if (data[next] === "{") return true;
  }
  return false;
}

/**
 * Passes a stream's events on, but for its final usage event (see finalUsageOf), to whose usage object the cost
 * is appended; that event alone is written anew. Only events whose data holds a usage object are read as JSON
 * here (the stream has parsed each once), and none after the first usage event stated. The events before the usage
 * event in the same batch go out first, without waiting for its cost (a settlement, when an x402 payment settles
 * there): a stream the upstream sent whole while its payment was verified still starts at once.
 */
export function withStreamUsageCost(source: EventStream, fieldsFor: UsageCostFields, trace?: CallTrace): EventStream {
  let stated = false;
  /** Appends the cost to the event if it is the final usage event; true when it did. */
  const state = async (event: SseEvent): Promise<boolean> => {
    const usage = finalUsageOf(event.json());
    if (!usage) return false;
    noteUsage(usage, trace);
    try {
      const fields = await fieldsFor(usage);
      if (!fields) return false;
      Object.assign(usage, fields);
      event.changed();
      return true;
    } catch (error) {
      // The cost could not be stated (a prepaid balance that cannot be read): the event goes on as it came.
      logEvent("error", "usage_cost_failed", { error: (error as Error).message, trace_id: trace?.span.traceId });
      return false;
    }
  };
  const isFinalUsage = (event: SseEvent) => mayHoldUsage(event) && finalUsageOf(event.json()) !== undefined;
  const reader = source.getReader();
  /** The rest of a batch split before its usage event, passed on by the next pull. */
  let rest: SseEvent[] | undefined;
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      let batch = rest;
      rest = undefined;
      if (!batch) {
        const { done, value } = await reader.read();
        if (done) return controller.close();
        batch = value;
      }
      const at = stated ? -1 : batch.findIndex(isFinalUsage);
      if (at > 0) {
        controller.enqueue(batch.slice(0, at));
        rest = batch.slice(at);
        return;
      }
      if (at === 0 && (await state(batch[0]!))) stated = true;
      controller.enqueue(batch);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}
