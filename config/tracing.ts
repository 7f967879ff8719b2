import type { Environment } from "./configuration-error";
import { insecureUrlProblem, redactedUrl } from "./host-urls";

/**
 * Where spans go: OpenTelemetry's standard variables, read as the SDKs read them. Off unless they name an exporter:
 * OTEL_TRACES_EXPORTER=otlp, or an OTLP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or ..._TRACES_ENDPOINT).
 */
export interface TracingSettings {
  /** The OTLP/HTTP traces URL (…/v1/traces), sent JSON. */
  url: string;
  /** Headers sent with each export (an API key for a hosted backend). */
  headers: Record<string, string>;
  serviceName: string;
  /** Resource attributes beyond the service's name (OTEL_RESOURCE_ATTRIBUTES). */
  resource: Record<string, string>;
  /** OTEL_TRACES_SAMPLER, as the SDK names them, and its ratio where it takes one. */
  sampler: { kind: Sampler; ratio: number };
  /** How long spans wait to be exported in a batch (OTEL_BSP_SCHEDULE_DELAY, ms). */
  batchDelayMs: number;
}

const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
type Sampler = (typeof SAMPLERS)[number];

/** The standard's default collector, where OTEL_TRACES_EXPORTER=otlp names no endpoint. */
const DEFAULT_ENDPOINT = "http://localhost:4318";

/** The tracing settings, undefined when tracing is off; a problem is pushed for each variable that cannot be used. */
export function tracingSettings(env: Environment, problems: string[]): TracingSettings | undefined {
  const value = (name: string) => env[name]?.trim() || undefined;
  if (value("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = value("OTEL_TRACES_EXPORTER")?.toLowerCase();
  const tracesEndpoint = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = value("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (exporter === "none") return undefined;
  if (exporter !== undefined && exporter !== "otlp") {
    problems.push(`OTEL_TRACES_EXPORTER: ${exporter} is not supported: paysvc exports spans over OTLP (otlp) or none`);
    return undefined;
  }
  if (exporter === undefined && !tracesEndpoint && !endpoint) return undefined;
  const protocol = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL");
  if (protocol !== undefined && protocol !== "http/json") {
    const name = value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
      ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
      : "OTEL_EXPORTER_OTLP_PROTOCOL";
    problems.push(
      `${name}: ${protocol} is not supported: paysvc sends OTLP over HTTP as JSON (http/json), which collectors accept on their HTTP port (4318); set http/json or leave it unset`,
    );
  }
  const url = tracesEndpoint ?? `${(endpoint ?? DEFAULT_ENDPOINT).replace(/\/+$/, "")}/v1/traces`;
  const variable = tracesEndpoint ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" : "OTEL_EXPORTER_OTLP_ENDPOINT";
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    problems.push(`${variable}: ${redactedUrl(url)} is not an http(s) URL`);
    return undefined;
  }
  const headers = pairs(value("OTEL_EXPORTER_OTLP_TRACES_HEADERS") ?? value("OTEL_EXPORTER_OTLP_HEADERS"));
  // Spans name payers and amounts, and the headers often carry a backend's key.
  const insecure = insecureUrlProblem(url);
  if (insecure) problems.push(`${variable}: ${insecure}`);
  const resource = pairs(value("OTEL_RESOURCE_ATTRIBUTES"));
  const serviceName = value("OTEL_SERVICE_NAME") ?? resource["service.name"] ?? "paysvc";
  const delay = value("OTEL_BSP_SCHEDULE_DELAY");
  const batchDelayMs = delay === undefined ? 5000 : Number(delay);
  if (!(Number.isInteger(batchDelayMs) && batchDelayMs >= 0)) {
    problems.push(`OTEL_BSP_SCHEDULE_DELAY: ${delay} is not a whole number of milliseconds`);
  }
  return { url, headers, serviceName, resource, sampler: samplerOf(value, problems), batchDelayMs };
}

function samplerOf(value: (name: string) => string | undefined, problems: string[]): TracingSettings["sampler"] {
  const kind = (value("OTEL_TRACES_SAMPLER")?.toLowerCase() ?? "parentbased_always_on") as Sampler;
  if (!SAMPLERS.includes(kind)) {
    problems.push(`OTEL_TRACES_SAMPLER: ${kind} is not supported; use one of ${SAMPLERS.join(", ")}`);
  }
  const argument = value("OTEL_TRACES_SAMPLER_ARG");
  const ratio = argument === undefined ? 1 : Number(argument);
  if (kind.endsWith("traceidratio") && !(ratio >= 0 && ratio <= 1)) {
    problems.push(`OTEL_TRACES_SAMPLER_ARG: ${argument} is not a ratio from 0 to 1`);
  }
  return { kind, ratio };
}

/** `key=value,key2=value2`, values percent-encoded, as the OTEL_* list variables are written. */
function pairs(list: string | undefined): Record<string, string> {
  const entries: Record<string, string> = {};
  for (const item of list?.split(",") ?? []) {
    const at = item.indexOf("=");
    if (at <= 0) continue;
    const key = item.slice(0, at).trim();
    const raw = item.slice(at + 1).trim();
    let decoded = raw;
    try {
      decoded = decodeURIComponent(raw);
    } catch {
      decoded = raw;
    }
    entries[key] = decoded;
  }
  return entries;
}
