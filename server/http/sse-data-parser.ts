/**
 * Splits a server-sent event stream into the data of its events, as text arrives in arbitrary pieces.
 * Comments, `event:` and `id:` lines are skipped; multi-line data is joined with "\n".
 */
export class SseDataParser {
  private buffer = "";

  /** Data of every event completed by `text`. */
  push(text: string): string[] {
    this.buffer += text.replace(/\r\n?/g, "\n");
    const events: string[] = [];
    let boundary = this.buffer.indexOf("\n\n");
    while (boundary !== -1) {
      const data = dataOf(this.buffer.slice(0, boundary));
      if (data !== undefined) events.push(data);
      this.buffer = this.buffer.slice(boundary + 2);
      boundary = this.buffer.indexOf("\n\n");
    }
    return events;
  }

  /** Data of a final event the stream ended without terminating. */
  flush(): string[] {
    const data = dataOf(this.buffer);
    this.buffer = "";
    return data === undefined ? [] : [data];
  }
}

function dataOf(block: string): string | undefined {
  const lines = block
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(line.startsWith("data: ") ? 6 : 5));
  return lines.length > 0 ? lines.join("\n") : undefined;
}

/** The JSON value of an event's data, or undefined when it is not JSON (`[DONE]`, garbage). */
export function parseEventJson(data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}

/**
 * Whether an event's data is an error object: `{"error": ...}` anywhere at its top level (chat completions; some
 * providers put it beside an id), or `{"type": "error"}` (Responses). Content that merely says "error" is not.
 */
export function isErrorEvent(data: string): boolean {
  if (!data.includes('"error"')) return false;
  const event = parseEventJson(data) as { error?: unknown; type?: unknown } | undefined;
  return typeof event === "object" && event !== null && ((event.error ?? null) !== null || event.type === "error");
}
