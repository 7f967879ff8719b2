import { context, trace, type Attributes, type Span } from "@opentelemetry/api";
import { failedSpan, startSpan } from "../tracing/spans";

/**
 * A call's phases and how long each took (ms): its Server-Timing header, the metrics' phase histograms
 * (`metrics.timed`) and the ledger's row read them.
 */
export type Timings = Record<string, number>;

/**
 * Runs one phase of a call (the quote, the reservation, the verify, the settlement): its duration is written to
 * `timings[name]` once it ends, failed or not, and while tracing is on it is a span `paysvc.<name>`, current while
 * it runs (the facilitator's and provider's spans inside it are its children), marked failed by what it throws.
 * Work that answers at once (not a promise) is timed at once: the phase then takes no extra turn. `span: false` for
 * a phase whose spans are its own already (the work: one per provider attempt).
 */
export function phase<T>(
  timings: Timings,
  name: string,
  work: (span: Span | undefined) => T | Promise<T>,
  options: { attributes?: Attributes; span?: boolean } = {},
): T | Promise<T> {
  const started = performance.now();
  const span = options.span === false ? undefined : startSpan(`paysvc.${name}`, options.attributes);
  const ended = (error?: unknown) => {
    timings[name] = performance.now() - started;
    if (!span) return;
    if (error !== undefined) failedSpan(span, error);
    span.end();
  };
  let result: T | Promise<T>;
  try {
    result = span ? context.with(trace.setSpan(context.active(), span), () => work(span)) : work(undefined);
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
