import { countTextTokens } from "../pricing/count-tokens";

/**
 * Meters a streamed answer billed in tokens, one event's data at a time: a pure object, fed by metered-stream.ts.
 * Each event is parsed once, against the chunk schema of its API.
 */
export interface StreamMeter {
  /** Some events may be hidden: the stream is then passed on event by event, not byte for byte. */
  readonly mayHide: boolean;
  /** Reads one event's data; true when the event must be hidden from the caller. */
  push(data: string): boolean;
  /**
   * Output tokens to charge once the stream ended; `completed`: the upstream ended it (not a failure, not the
   * client leaving). undefined: charge nothing.
   */
  result(completed: boolean): number | undefined;
  /** The upstream reported the usage: nothing more is needed to bill. */
  readonly usageReported: boolean;
  /** Some output text has passed. */
  readonly hasOutput: boolean;
}

/** What one event told: reported output tokens, output text, whether to hide it. */
export interface EventReading {
  outputTokens?: number;
  text?: string;
  hide?: boolean;
}

/**
 * The rules both APIs share: the reported output tokens win; without a report, a stream the upstream completed
 * without error is charged the whole reservation (it may have produced all of it), one cut short the output
 * text it passed on, counted as the input is, or nothing when it passed none.
 */
export function streamMeter(
  allowedOutput: number,
  read: (event: object) => EventReading,
  mayHide = false,
): StreamMeter {
  let outputTokens: number | undefined;
  let text = "";
  let brokeOff = false;
  return {
    mayHide,
    push(data) {
      const event = parseData(data);
      if (typeof event !== "object" || event === null) return false;
      if (isError(event)) brokeOff = true;
      const reading = read(event);
      if (reading.outputTokens !== undefined) outputTokens = reading.outputTokens;
      if (reading.text) text += reading.text;
      return reading.hide === true;
    },
    result(completed) {
      if (outputTokens !== undefined) return outputTokens;
      if (completed && !brokeOff) return allowedOutput;
      return text === "" ? undefined : countTextTokens(text);
    },
    get usageReported() {
      return outputTokens !== undefined || brokeOff;
    },
    get hasOutput() {
      return text !== "";
    },
  };
}

/**
 * An error in place of a chunk: `{"error": ...}` at the top level (chat completions; some providers put it beside
 * an id), or `{"type": "error"}` (Responses).
 */
function isError(event: { error?: unknown; type?: unknown }): boolean {
  return (event.error ?? null) !== null || event.type === "error";
}

/** The JSON of an event's data, or undefined when it is not JSON (`[DONE]`). */
function parseData(data: string): unknown {
  if (data === "[DONE]") return undefined;
  try {
    return JSON.parse(data);
  } catch {
    return undefined;
  }
}
