import { randomBytes } from "node:crypto";
import type { SpanParent } from "./span";

const ZEROS = /^0+$/;

/** Random bytes drawn 4 KiB at a time, as hex: an id is a slice of them. */
const POOL_BYTES = 4096;
let pool = "";
let taken = 0;

function randomHex(bytes: number): string {
  const digits = bytes * 2;
  if (taken + digits > pool.length) {
    pool = randomBytes(POOL_BYTES).toString("hex");
    taken = 0;
  }
  const hex = pool.slice(taken, (taken += digits));
  // W3C forbids an id of zeros only.
  return ZEROS.test(hex) ? randomHex(bytes) : hex;
}

/** A new trace's id: 16 random bytes as 32 hex digits. */
export const newTraceId = (): string => randomHex(16);

/** A new span's id: 8 random bytes as 16 hex digits. */
export const newSpanId = (): string => randomHex(8);

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

/**
 * The caller's span named by its W3C `traceparent` (and the `tracestate` that goes with it), or undefined when it
 * sent none or one that is not valid (which starts a trace of our own, as the recommendation says).
 */
export function remoteParent(
  traceparent: string | string[] | undefined,
  tracestate: string | string[] | undefined,
): SpanParent | undefined {
  if (typeof traceparent !== "string") return undefined;
  const [, version, traceId, spanId, flags, rest] = TRACEPARENT.exec(traceparent.trim()) ?? [];
  if (!version || !traceId || !spanId || !flags || version === "ff") return undefined;
  // Version 00 has exactly four fields; a later version may add more, which a 00 parser leaves alone.
  if (version === "00" && rest !== undefined) return undefined;
  if (ZEROS.test(traceId) || ZEROS.test(spanId)) return undefined;
  const state = Array.isArray(tracestate) ? tracestate.join(",") : tracestate?.trim();
  return {
    traceId,
    spanId,
    sampled: (Number.parseInt(flags, 16) & 1) === 1,
    // Passed on as it came, unless it is beyond the 512 characters the recommendation asks a vendor to keep.
    traceState: state && state.length <= 512 ? state : undefined,
  };
}
