import { logEvent } from "../log";
import { finalUsageOf } from "./answer-cost";

/** The fields to append to a stream's final usage object; undefined leaves the event as it was. */
export type UsageCostFields = (
  usage: Record<string, unknown>,
) => Promise<Record<string, unknown> | undefined> | Record<string, unknown> | undefined;

// Events end with a blank line: LF LF, CRLF CRLF or CR CR. An odd mix only merges two events into one piece.
const EVENT_ENDS = ["\n\n", "\r\n\r\n", "\r\r"].map((end) => Buffer.from(end));
const USAGE_KEY = Buffer.from('"usage":');
const LF = 0x0a;
const SPACE = 0x20;
const OPEN_BRACE = 0x7b;

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Where the last complete event of `bytes` ends (0: none is complete yet). */
function completeEventsEnd(bytes: Buffer): number {
  // The usual read ends with an event's blank line (LF LF, or CRLF CRLF): no search.
  const { length } = bytes;
  if (bytes[length - 1] === LF && (bytes[length - 2] === LF || bytes[length - 3] === LF)) return length;
  let end = 0;
  for (const marker of EVENT_ENDS) {
    const at = bytes.lastIndexOf(marker);
    if (at >= 0) end = Math.max(end, at + marker.length);
  }
  return end;
}

/** Where the event that starts at `from` ends. */
function eventEnd(bytes: Buffer, from: number): number {
  let end = bytes.length;
  for (const marker of EVENT_ENDS) {
    const at = bytes.indexOf(marker, from);
    if (at >= 0) end = Math.min(end, at + marker.length);
  }
  return end;
}

/** Whether `bytes` hold a usage object: not `"usage":null`, which OpenAI puts in every chunk of a stream with usage. */
function mayHoldUsage(bytes: Buffer): boolean {
  for (let at = bytes.indexOf(USAGE_KEY); at >= 0; at = bytes.indexOf(USAGE_KEY, at + 1)) {
    let next = at + USAGE_KEY.length;
    while (bytes[next] === SPACE) next++;
    if (bytes[next] === OPEN_BRACE) return true;
  }
  return false;
}

/**
 * One event's text with `fields` appended to its final usage object, its other lines and line ends kept; undefined
 * when it is not the final usage event.
 */
async function withCost(text: string, fieldsFor: UsageCostFields): Promise<string | undefined> {
  const parts = text.split(/(\r\n|\r|\n)/);
  const dataLines = parts.flatMap((line, index) => (index % 2 === 0 && line.startsWith("data:") ? [index] : []));
  if (dataLines.length === 0) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(dataLines.map((index) => parts[index]!.slice(5).replace(/^ /, "")).join("\n"));
  } catch {
    return undefined;
  }
  const usage = finalUsageOf(event);
  if (!usage) return undefined;
  const fields = await fieldsFor(usage);
  if (!fields) return undefined;
  Object.assign(usage, fields);
  // The data goes back on the first data line; any further data lines (and their line ends) are dropped.
  const [first, ...others] = dataLines;
  parts[first!] = `data: ${JSON.stringify(event)}`;
  for (const index of others.reverse()) parts.splice(index, 2);
  return parts.join("");
}

/**
 * Passes an event stream on byte for byte, but for its final usage event (see finalUsageOf), to whose usage object
 * the cost is appended. Only events that hold a usage object are decoded and parsed, and only the final one is
 * written anew. Bytes are passed on at event boundaries (a partial event waits for its end, which a client could not
 * use before either); once the usage event has passed, everything after it goes straight through.
 */
export function withStreamUsageCost(
  source: ReadableStream<Uint8Array>,
  fieldsFor: UsageCostFields,
): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let pending: Buffer | undefined;
  let stated = false;
  let cancelled = false;

  /** Complete events that hold a usage object, as they are to be sent. */
  const withStatedCost = async (bytes: Buffer): Promise<Uint8Array> => {
    const pieces: Uint8Array[] = [];
    for (let start = 0; start < bytes.length;) {
      const end = eventEnd(bytes, start);
      const event = bytes.subarray(start, end);
      const rewritten = !stated && mayHoldUsage(event) ? await rewrite(event) : undefined;
      if (rewritten !== undefined) stated = true;
      pieces.push(rewritten === undefined ? event : Buffer.from(rewritten, "utf8"));
      start = end;
    }
    return stated ? Buffer.concat(pieces) : bytes;
  };
  const rewrite = async (event: Buffer): Promise<string | undefined> => {
    try {
      return await withCost(event.toString("utf8"), fieldsFor);
    } catch (error) {
      // The cost could not be stated (a prepaid balance that cannot be read): the event goes on as it came.
      logEvent("error", "usage_cost_failed", { error: (error as Error).message });
      return undefined;
    }
  };

  // The usual events hold no usage object: passed on without a promise of their own.
  const passed = (bytes: Buffer) => (stated || !mayHoldUsage(bytes) ? bytes : withStatedCost(bytes));

  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      // A read that completes no event passes nothing on, so it reads on (pull is called again only after an
      // enqueue).
      for (;;) {
        const { done, value } = await reader.read();
        // The client left while this read waited: nothing is left to answer.
        if (cancelled) return;
        if (done) {
          const rest = pending && (await passed(pending));
          if (cancelled) return;
          if (rest) controller.enqueue(rest);
          controller.close();
          return;
        }
        let bytes = asBuffer(value);
        if (pending) {
          bytes = Buffer.concat([pending, bytes]);
          pending = undefined;
        }
        const end = stated ? bytes.length : completeEventsEnd(bytes);
        if (end < bytes.length) pending = bytes.subarray(end);
        if (end > 0) {
          const result = passed(end === bytes.length ? bytes : bytes.subarray(0, end));
          const events = result instanceof Promise ? await result : result;
          if (!cancelled) controller.enqueue(events);
          return;
        }
      }
    },
    cancel(reason) {
      cancelled = true;
      return reader.cancel(reason);
    },
  });
}
