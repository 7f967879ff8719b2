import { logEvent } from "../core/log";

/** One dependency's probe as last seen: up or down, how long it took, and (for the log and the operator) why. */
export type ProbeResult = { status: "up"; latency_ms: number } | { status: "down"; latency_ms: number; error: string };

const PROBE_TIMEOUT_MS = 2000;

async function probe(check: () => Promise<unknown> | unknown): Promise<ProbeResult> {
  const started = performance.now();
  const elapsed = () => Number((performance.now() - started).toFixed(2));
  try {
    await Promise.race([
      Promise.resolve().then(check),
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no answer within ${PROBE_TIMEOUT_MS} ms`)), PROBE_TIMEOUT_MS).unref(),
      ),
    ]);
    return { status: "up", latency_ms: elapsed() };
  } catch (error) {
    return { status: "down", latency_ms: elapsed(), error: (error as Error).message };
  }
}

/**
 * Probes shared by every /health of a process for `periodMs`: a flood of /health asks each dependency at most once
 * per period (a probe under way is joined, not repeated). A dependency found down is logged with its error, which
 * the public answer leaves out; the log says it once per period at most.
 */
export class ProbeCache {
  private readonly entries = new Map<string, { at: number; result: Promise<ProbeResult> }>();

  constructor(private readonly periodMs: number) {}

  get(name: string, check: () => Promise<unknown> | unknown, periodMs = this.periodMs): Promise<ProbeResult> {
    const now = performance.now();
    const entry = this.entries.get(name);
    if (entry && now - entry.at < periodMs) return entry.result;
    const result = probe(check).then((outcome) => {
      if (outcome.status === "down") logEvent("warn", "dependency_down", { dependency: name, error: outcome.error });
      return outcome;
    });
    this.entries.set(name, { at: now, result });
    return result;
  }
}

export { PROBE_TIMEOUT_MS };
