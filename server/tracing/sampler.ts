import type { TracingSettings } from "../../config/tracing";
import type { SpanParent } from "./span";

/** Whether a new span is recorded, from its trace's id and the span it continues (a caller's or ours). */
export type Sampler = (traceId: string, parent: SpanParent | undefined) => boolean;

/** 2^52: the trace id's last 13 hex digits (random, as W3C's level 2 has them) read as a fraction of it. */
const SCALE = 2 ** 52;

/**
 * The sampler OTEL_TRACES_SAMPLER names, decided as the SDK decides it: `traceidratio` keeps a trace when its id's
 * random part falls below the ratio (so every span of a trace gets the same answer); a `parentbased_` one follows
 * the parent's sampled flag and asks its root rule only for a trace that starts here.
 */
export function samplerOf({ kind, ratio }: TracingSettings["sampler"]): Sampler {
  const root: (traceId: string) => boolean = kind.endsWith("always_off")
    ? () => false
    : kind.endsWith("traceidratio")
      ? (traceId) => Number.parseInt(traceId.slice(19), 16) < ratio * SCALE
      : () => true;
  if (!kind.startsWith("parentbased_")) return (traceId) => root(traceId);
  return (traceId, parent) => (parent ? parent.sampled : root(traceId));
}
