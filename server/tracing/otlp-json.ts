import type { Attributes, AttributeValue, Span } from "./span";

/**
 * A time in ms as whole seconds and the rest's nanoseconds, rounded as OpenTelemetry's SDK rounds it (its
 * millisToHrTime): the clock's origin and a span's time are each rounded so, then added, so that the nanoseconds
 * written are the SDK's to the unit.
 */
function secondsAndNanos(ms: number): [number, number] {
  return [Math.trunc(ms / 1e3), Math.round((ms % 1e3) * 1e6)];
}

/** The clock spans are timed on (`performance.now()`), as Unix time. */
const ORIGIN = secondsAndNanos(performance.timeOrigin);

/** A time on `performance.now()`'s clock as OTLP's Unix nanoseconds (a decimal string: it is beyond 2^53). */
function unixNanos(at: number): string {
  const [seconds, nanos] = secondsAndNanos(at);
  let wholeSeconds = ORIGIN[0] + seconds;
  let rest = ORIGIN[1] + nanos;
  if (rest >= 1e9) {
    wholeSeconds += 1;
    rest -= 1e9;
  }
  return `${wholeSeconds}${String(rest).padStart(9, "0")}`;
}

/** One attribute value as OTLP/JSON's AnyValue. */
function anyValue(value: AttributeValue): string {
  if (typeof value === "string") return `{"stringValue":${JSON.stringify(value)}}`;
  if (typeof value === "boolean") return `{"boolValue":${value}}`;
  if (Number.isInteger(value)) return `{"intValue":${value}}`;
  // Protobuf's JSON writes the values JSON has no number for as strings.
  return Number.isFinite(value) ? `{"doubleValue":${value}}` : `{"doubleValue":"${value}"}`;
}

/** Each attribute name's KeyValue opening, written once: the names are the code's own, a few dozen. */
const keyOpenings = new Map<string, string>();

function keyOpening(key: string): string {
  let opening = keyOpenings.get(key);
  if (opening === undefined) {
    opening = `{"key":${JSON.stringify(key)},"value":`;
    if (keyOpenings.size < 512) keyOpenings.set(key, opening);
  }
  return opening;
}

/** Attributes as OTLP/JSON's list of KeyValue. */
function attributesJson(attributes: Attributes): string {
  let json = "";
  for (const key in attributes) json += `${json ? "," : ""}${keyOpening(key)}${anyValue(attributes[key]!)}}`;
  return `[${json}]`;
}

/** OTLP's span flags: the W3C flags (sampled), and whether the parent is known to be a remote one, and is. */
const SAMPLED = 0x1;
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;

/** One ended span as OTLP/JSON's Span (ids as hex, as OTLP/JSON has them). */
export function spanJson(span: Span): string {
  const parent = span.parentSpanId ? `,"parentSpanId":"${span.parentSpanId}"` : "";
  const flags = SAMPLED | HAS_IS_REMOTE | (span.remoteParent ? IS_REMOTE : 0);
  const state = span.traceState ? `,"traceState":${JSON.stringify(span.traceState)}` : "";
  return (
    `{"traceId":"${span.traceId}","spanId":"${span.spanId}"${parent}${state},"name":${JSON.stringify(span.name)}` +
    `,"kind":${span.kind},"startTimeUnixNano":"${unixNanos(span.startedAt)}"` +
    `,"endTimeUnixNano":"${unixNanos(span.endedAt ?? span.startedAt)}"` +
    `,"attributes":${attributesJson(span.attributes)},"status":{${span.failed ? `"code":2` : ""}},"flags":${flags}}`
  );
}

/**
 * An export request's body (ExportTraceServiceRequest) as the JSON before and after its spans, which go between
 * them separated by commas: the process's resource, and one instrumentation scope.
 */
export function exportRequestFrame(
  resource: Attributes,
  scope: { name: string; version: string },
): { head: string; tail: string } {
  return {
    head: `{"resourceSpans":[{"resource":{"attributes":${attributesJson(resource)}},"scopeSpans":[{"scope":${JSON.stringify(scope)},"spans":[`,
    tail: "]}]}]}",
  };
}
