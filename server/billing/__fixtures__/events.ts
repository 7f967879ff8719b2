import { EventSplitter, parseEventStream, SseEvent, writeEventStream, type EventStream } from "../../http/event-stream";
import type { StreamMeter } from "../stream-meter";
import { readChunks, streamOf } from "./read-chunks";

/** The data of every event of a fixture that has data, in order, as the stream parses them. */
export function dataOfFixture(name: string): string[] {
  const splitter = new EventSplitter();
  const encoder = new TextEncoder();
  const events = [...readChunks(name).flatMap((chunk) => splitter.push(encoder.encode(chunk))), ...splitter.end()];
  return events.flatMap((event) => (event.data === undefined ? [] : [event.data]));
}

/** A meter that the tests feed with event data as text. */
export function fedWithData(meter: StreamMeter): Omit<StreamMeter, "push"> & { push(data: string): void } {
  return Object.assign(Object.create(meter) as StreamMeter, {
    push: (data: string) => meter.push(new SseEvent(data)),
  });
}

/** The events of `chunks`, one read each, as the upstream client parses them; see streamOf. */
export function eventStreamOf(chunks: readonly string[], options: { failAfter?: boolean } = {}): EventStream {
  return parseEventStream(streamOf(chunks, options));
}

/** The bytes an event stream is written as. */
export const bytesOf = writeEventStream;
