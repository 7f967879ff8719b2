import { MAX_UPSTREAM_ANSWER_BYTES } from "../../config/limits";

/**
 * Server-sent event streams, parsed once: the upstream's bytes become events as they arrive (one batch per network
 * read), the stages between (the sold model id, the Responses translation, metering, the cost in the usage event)
 * read and change events, never bytes, and the answer's bytes are written once at the end. An event keeps the
 * text it came as, and is written out as that text unless a stage changed it: what no stage touched reaches the
 * caller byte for byte (line ends of every kind, comments such as a provider's `: PROCESSING` keep-alives).
 */

/** The events a stream carries, in batches: those one network read completed. */
export type EventStream = ReadableStream<SseEvent[]>;

const NOT_PARSED = Symbol("not parsed");

/** One event: its fields, its data read as JSON at most once, and the text it came as. */
export class SseEvent {
  private parsed: Record<string, unknown> | undefined | typeof NOT_PARSED = NOT_PARSED;
  /** How the event's lines end, and what follows its last line: kept when a changed event is written anew. */
  private lineEnd = "\n";
  private trailing = "\n\n";

  constructor(
    /** The data lines joined with "\n"; undefined for an event without data (a comment alone). */
    readonly data: string | undefined,
    /** The `event:` name, if any. */
    readonly name?: string,
    /** The text it came as, its blank line included; undefined for an event made here or changed. */
    private raw?: string,
    /** The `id:` field, if any. */
    readonly id?: string,
  ) {}

  /** An event made here from a JSON object (an error, a Responses event). */
  static of(json: Record<string, unknown>, name?: string): SseEvent {
    const event = new SseEvent(undefined, name);
    event.parsed = json;
    return event;
  }

  /**
   * An event made here whose data is JSON already written on one line (a Responses delta, written from its fields
   * with no object to stringify): its text is that of `of` with the same JSON, made at once.
   */
  static ofJsonText(data: string, name: string): SseEvent {
    return new SseEvent(data, name, `event: ${name}\ndata: ${data}\n\n`);
  }

  /** The data as a JSON object, parsed on first use; undefined when it is not one (`[DONE]`, a comment). */
  json(): Record<string, unknown> | undefined {
    if (this.parsed !== NOT_PARSED) return this.parsed;
    this.parsed = undefined;
    const { data } = this;
    // Only an object can be a chunk: other data (`[DONE]`) is not handed to the JSON parser at all.
    if (data === undefined || !data.trimStart().startsWith("{")) return undefined;
    try {
      const value: unknown = JSON.parse(data);
      if (typeof value === "object" && value !== null && !Array.isArray(value)) {
        this.parsed = value as Record<string, unknown>;
      }
    } catch {
      // A provider's garbage: no JSON to read, passed on as it came.
    }
    return this.parsed;
  }

  /** Says that a stage changed `json()` in place: the event is written anew from it, its line ends as they were. */
  changed(): void {
    if (this.raw === undefined) return;
    this.lineEnd = /\r\n|\r|\n/.exec(this.raw)?.[0] ?? "\n";
    this.trailing = /(?:\r\n|\r|\n)*$/.exec(this.raw)?.[0] ?? "";
    this.raw = undefined;
  }

  /** The event's text for the caller. */
  text(): string {
    if (this.raw !== undefined) return this.raw;
    const json = this.parsed === NOT_PARSED ? undefined : this.parsed;
    const data = json === undefined ? this.data : JSON.stringify(json);
    const lines: string[] = [];
    if (this.name !== undefined) lines.push(`event: ${this.name}`);
    if (this.id !== undefined) lines.push(`id: ${this.id}`);
    if (data !== undefined) for (const line of data.split("\n")) lines.push(`data: ${line}`);
    return lines.join(this.lineEnd) + this.trailing;
  }
}

const LINE_END = /\r\n|\r|\n/g;

/** The longest event taken, in characters: as long as the largest whole answer read from a provider. */
const MAX_EVENT_LENGTH = MAX_UPSTREAM_ANSWER_BYTES;

/**
 * Splits text arriving in arbitrary pieces into events, as the event-stream format defines them: lines end with
 * CRLF, LF or CR (a CR that ends a piece waits for the next, which may hold its LF); a blank line ends an event;
 * `data:` lines join with "\n", `event:` names it, `id:` is kept, lines starting with ":" are comments, other fields
 * are kept in the text only. Every character received belongs to exactly one event's text. Each character is
 * looked at once however the pieces cut an event, and an event longer than `maxEventLength` fails the stream.
 */
export class EventSplitter {
  /** The text from the start of the event not complete yet. */
  private text = "";
  /** Where, in `text`, the line not ended yet starts, and where the search for its end goes on. */
  private lineStart = 0;
  private searchFrom = 0;
  private data: string | undefined;
  private name: string | undefined;
  private id: string | undefined;
  private readonly decoder = new TextDecoder();

  constructor(private readonly maxEventLength = MAX_EVENT_LENGTH) {}

  /** The events `bytes` completed. */
  push(bytes: Uint8Array): SseEvent[] {
    this.text += this.decoder.decode(bytes, { stream: true });
    return this.scan(false);
  }

  /** The events left when the stream ends, a last one without its blank line included (its text as it came). */
  end(): SseEvent[] {
    this.text += this.decoder.decode();
    const events = this.scan(true);
    if (this.text !== "") {
      if (this.lineStart < this.text.length) this.field(this.text.slice(this.lineStart));
      events.push(new SseEvent(this.data, this.name, this.text, this.id));
    }
    this.text = "";
    this.lineStart = this.searchFrom = 0;
    this.data = this.name = this.id = undefined;
    return events;
  }

  private scan(ended: boolean): SseEvent[] {
    const events: SseEvent[] = [];
    const { text } = this;
    let eventStart = 0;
    LINE_END.lastIndex = this.searchFrom;
    this.searchFrom = text.length;
    for (let match = LINE_END.exec(text); match; match = LINE_END.exec(text)) {
      const lineEnd = LINE_END.lastIndex;
      if (!ended && match[0] === "\r" && lineEnd === text.length) {
        this.searchFrom = match.index;
        break;
      }
      const line = text.slice(this.lineStart, match.index);
      this.lineStart = lineEnd;
      if (line !== "") {
        this.field(line);
        continue;
      }
      events.push(new SseEvent(this.data, this.name, text.slice(eventStart, lineEnd), this.id));
      eventStart = lineEnd;
      this.data = this.name = this.id = undefined;
    }
    if (eventStart > 0) {
      this.text = text.slice(eventStart);
      this.lineStart -= eventStart;
      this.searchFrom -= eventStart;
    }
    if (this.text.length > this.maxEventLength) {
      throw new Error(`the stream sent an event longer than ${this.maxEventLength} characters`);
    }
    return events;
  }

  /** Reads one line of the event not complete yet. */
  private field(line: string): void {
    if (line.charCodeAt(0) === 0x3a /* : */) return;
    const colon = line.indexOf(":");
    const name = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.charCodeAt(0) === 0x20) value = value.slice(1);
    if (name === "data") this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (name === "event") this.name = value;
    else if (name === "id") this.id = value;
  }
}

/** The events of a byte stream, one batch per read that completed any. */
export function parseEventStream(source: ReadableStream<Uint8Array>): EventStream {
  const reader = source.getReader();
  const splitter = new EventSplitter();
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        const events = done ? splitter.end() : splitter.push(value);
        if (events.length > 0) controller.enqueue(events);
        if (done) return controller.close();
        if (events.length > 0) return;
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * A stage over an event stream: `change` gives each batch's events to pass on (an empty result reads on), `end` the
 * ones to add when the source ends. Cancelling the stage cancels its source, and resolves once that did: a metered
 * stream settles its reservation there, which a caller that leaves waits for.
 */
export function mapEvents<T = SseEvent[]>(
  source: EventStream,
  change: (batch: SseEvent[]) => T | undefined | Promise<T | undefined>,
  end?: () => T | undefined,
): ReadableStream<T> {
  const reader = source.getReader();
  return new ReadableStream<T>({
    async pull(controller) {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) {
          const last = end?.();
          if (last !== undefined) controller.enqueue(last);
          controller.close();
          return;
        }
        const changed = await change(value);
        if (changed !== undefined) {
          controller.enqueue(changed);
          return;
        }
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A stage that changes or drops events one at a time, in order. */
export function eachEvent(
  source: EventStream,
  change: (event: SseEvent) => SseEvent[] | SseEvent | undefined,
): EventStream {
  return mapEvents(source, (batch) => {
    const out: SseEvent[] = [];
    for (const event of batch) {
      const changed = change(event);
      if (Array.isArray(changed)) out.push(...changed);
      else if (changed) out.push(changed);
    }
    return out.length > 0 ? out : undefined;
  });
}

/** The bytes of an event stream: each batch in one piece. */
export function writeEventStream(events: EventStream): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return mapEvents(events, (batch) => {
    let text = "";
    for (const event of batch) text += event.text();
    return text === "" ? undefined : encoder.encode(text);
  });
}

/** Whether an event's JSON is an error object: `{"error": ...}` at its top level (chat), or `{"type": "error"}`. */
export function isErrorObject(event: { error?: unknown; type?: unknown }): boolean {
  return (event.error ?? null) !== null || event.type === "error";
}
