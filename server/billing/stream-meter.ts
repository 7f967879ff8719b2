import { isErrorObject, parseEventJson } from "../http/sse-data-parser";
import { countTextTokens } from "../pricing/count-tokens";

/**
 * Meters a streamed answer billed in tokens, one event's data at a time: a pure object (no I/O, no timers), fed by
 * metered-stream.ts. Each event is parsed once, then read against the chunk schema of its API.
 */
export interface StreamMeter {
  /** Reads one event's data (the text after "data:"); returns whether the event must be hidden from the caller. */
  push(data: string): { hide: boolean };
  /**
   * Output tokens to charge when the stream ends. `completed`: the upstream ended the stream normally (it was not
   * cut by a network failure or by the client leaving). undefined = charge nothing (release).
   */
  result(completed: boolean): number | undefined;
  /**
   * True once the usage was reported, or can no longer be (an error event broke the stream off): the metered
   * stream may stop reading after the client left.
   */
  readonly usageReported: boolean;
  /** True once any output text was seen. */
  readonly hasOutput: boolean;
  /**
   * Whether some event may be hidden. Known before the first byte, because an event can start in one network
   * chunk and end in the next: a stream that may hide is passed on event by event from its start, one that never
   * hides byte for byte.
   */
  readonly mayHide: boolean;
}

/** What one event told: reported output tokens, output text, whether to hide it. */
export interface EventReading {
  outputTokens?: number;
  text?: string;
  hide?: boolean;
}

const SHOWN = Object.freeze({ hide: false });
const HIDDEN = Object.freeze({ hide: true });

/**
 * The rules both APIs share: the reported output tokens win; without a report, a stream the upstream completed
 * without an error event is charged the whole reservation (it may have produced all of it, and nothing shows
 * otherwise), one cut short or broken off the output text it passed on, counted as the input is, or nothing when
 * it passed none. `read` sees every event that is a JSON object, error events included.
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
      const event = parseEventJson(data);
      if (typeof event !== "object" || event === null) return SHOWN;
      if (isErrorObject(event)) brokeOff = true;
      const reading = read(event);
      if (reading.outputTokens !== undefined) outputTokens = reading.outputTokens;
      if (reading.text) text += reading.text;
      return reading.hide === true ? HIDDEN : SHOWN;
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
