import type { Attributes, Span } from "../tracing/span";
import { startSpan } from "../tracing/tracing";

/**
 * A call's phases and how long each took (ms): its Server-Timing header, the metrics' phase histograms
 * (`metrics.timed`) and the ledger's row read them.
 */
export type Timings = Record<string, number>;

/**
 * Runs one phase of a call (the quote, the reservation, the verify, the settlement): its duration is written to
 * `timings[name]` once it ends, failed or not, and in a traced request it is a span `paysvc.<name>`, a child of
 * `parent` (the request's span), given to `work` for the facilitator's spans inside it, and marked failed by what it
 * throws. Work that answers at once (not a promise) is timed at once: the phase then takes no extra turn.
 */
export function phase<T>(
  timings: Timings,
  name: string,
  work: (span: Span | undefined) => T | Promise<T>,
  options: { parent?: Span; attributes?: Attributes } = {},
): T | Promise<T> {
  const started = performance.now();
  const { parent } = options;
  const span = parent && startSpan(`paysvc.${name}`, parent, options.attributes);
  const ended = (error?: unknown) => {
    timings[name] = performance.now() - started;
    if (!span) return;
    if (error !== undefined) span.fail(error);
    span.end();
  };
  let result: T | Promise<T>;
  try {
    result = work(span);
  } catch (error) {
    ended(error);
    throw error;
  }
  if (!(result instanceof Promise)) {
    ended();
    return result;
  }
  return result.then(
    (value) => {
      ended();
      return value;
    },
    (error: unknown) => {
      ended(error ?? new Error("rejected"));
      throw error;
    },
  );
}
