import { createParser, type EventSourceParser } from "eventsource-parser";

/**
 * Splits a server-sent event stream into the data of its events, as text arrives in arbitrary pieces, with a
 * well-kept parser of the format (line ends of any kind, split anywhere, even inside a CRLF). Comments, `event:`
 * and `id:` lines are skipped; multi-line data is joined with "\n".
 */
export class SseDataParser {
  private events: string[] = [];
  private readonly parser: EventSourceParser = createParser({ onEvent: (event) => this.events.push(event.data) });

  /** Data of every event completed by `text`. */
  push(text: string): string[] {
    this.parser.feed(text);
    return this.take();
  }

  /** Data of a final event the stream ended without terminating. */
  flush(): string[] {
    // Ends the last line and the event. Not reset({ consume: true }): that parses the last line but then drops the
    // event it belongs to instead of dispatching it. A pending "\r" becomes one CRLF, so no empty event follows.
    this.parser.feed("\n\n");
    this.parser.reset();
    return this.take();
  }

  private take(): string[] {
    if (this.events.length === 0) return [];
    const events = this.events;
    this.events = [];
    return events;
  }
}

/** The JSON value of an event's data, or undefined when it is not JSON (`[DONE]`, a provider's garbage). */
export function parseEventJson(data: string): unknown {
  if (data === "[DONE]") return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/**
 * Whether a parsed event is an error object: `{"error": ...}` anywhere at its top level (chat completions; some
 * providers put it beside an id), or `{"type": "error"}` (Responses).
 */
export function isErrorObject(event: { error?: unknown; type?: unknown }): boolean {
  return (event.error ?? null) !== null || event.type === "error";
}

/** Whether an event's data is an error object. Content that merely says "error" is not. */
export function isErrorEvent(data: string): boolean {
  if (!data.includes('"error"')) return false;
  const event = parseEventJson(data);
  return typeof event === "object" && event !== null && isErrorObject(event);
}
