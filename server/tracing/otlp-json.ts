import type { Attributes, AttributeValue, Span } from "./span";

/** The clock spans are timed on (`performance.now()`), as Unix time: whole ms, and the fraction's nanoseconds. */
const ORIGIN_MS = Math.floor(performance.timeOrigin);
const ORIGIN_FRACTION = performance.timeOrigin - ORIGIN_MS;

/** A time on `performance.now()`'s clock as OTLP's Unix nanoseconds (a decimal string: it is beyond 2^53). */
function unixNanos(at: number): string {
  const whole = Math.floor(at);
  let nanos = Math.round((at - whole + ORIGIN_FRACTION) * 1e6);
  let ms = ORIGIN_MS + whole;
  if (nanos >= 1e6) {
    ms += 1;
    nanos -= 1e6;
  }
  return `${ms}${String(nanos).padStart(6, "0")}`;
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
