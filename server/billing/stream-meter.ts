import { isErrorObject, type SseEvent } from "../http/event-stream";
import { countTextTokens } from "../pricing/count-tokens";

/**
 * Meters a streamed answer billed in tokens, one event at a time: a pure object (no I/O, no timers), fed by
 * metered-stream.ts. It reads each event's JSON (parsed once, with the stream): the canonical chat stream's chunks
 * (chat-stream-meter.ts), whatever API the caller speaks.
 */
export interface StreamMeter {
  /** Reads one event. */
  push(event: SseEvent): void;
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
  /** The input tokens the provider reported, once it did. */
  readonly reportedInput: number | undefined;
}

/** What one event told: reported output tokens, output text. */
export interface EventReading {
  outputTokens?: number;
  inputTokens?: number;
  text?: string;
}

/**
 * The metering rules: the reported output tokens win; without a report, a stream the upstream completed
 * without an error event is charged the whole reservation (it may have produced all of it, and nothing shows
 * otherwise), one cut short or broken off the output text it passed on, counted as the input is, or nothing when
 * it passed none. `read` sees every event that is a JSON object, error events included.
 */
export function streamMeter(allowedOutput: number, read: (event: object) => EventReading): StreamMeter {
  let outputTokens: number | undefined;
  let inputTokens: number | undefined;
  let text = "";
  let brokeOff = false;
  return {
    push(event) {
      const json = event.json();
      if (json === undefined) return;
      if (isErrorObject(json)) brokeOff = true;
      const reading = read(json);
      if (reading.outputTokens !== undefined) outputTokens = reading.outputTokens;
      if (reading.inputTokens !== undefined) inputTokens = reading.inputTokens;
      if (reading.text) text += reading.text;
    },
    result(completed) {
      if (outputTokens !== undefined) return outputTokens;
      if (completed && !brokeOff) return allowedOutput;
      return text === "" ? undefined : countTextTokens(text);
    },
    get usageReported() {
      return outputTokens !== undefined || brokeOff;
    },
    get reportedInput() {
      return inputTokens;
    },
    get hasOutput() {
      return text !== "";
    },
  };
}
