import { SERVICE_VERSION } from "../../config/version";
import type { AppContext } from "../app-context";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";

type ComponentState = { status: "up"; latency_ms: number } | { status: "down"; latency_ms: number; error: string };

const PROBE_TIMEOUT_MS = 2000;

async function probe(check: () => Promise<unknown> | unknown): Promise<ComponentState> {
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

/** Endpoint 15: the state of the database, the facilitator and the upstream; 503 when any is down. */
export async function checkHealth(context: AppContext): Promise<{ status: number; body: unknown }> {
  const [database, facilitator, upstream] = await Promise.all([
    probe(() => context.storage.ping()),
    probe(() => context.gateway.probe()),
    probe(() => context.upstream.probe(PROBE_TIMEOUT_MS)),
  ]);
  const healthy = [database, facilitator, upstream].every((component) => component.status === "up");
  return {
    status: healthy ? 200 : 503,
    body: {
      status: healthy ? "ok" : "degraded",
      network: context.config.network.id,
      version: SERVICE_VERSION,
      checks: { database: { engine: context.storage.engine, ...database }, facilitator, upstream },
    },
  };
}

/** Endpoint 15 as an HTTP answer, never cached. */
export async function healthResponse(context: AppContext): Promise<ApiAnswer> {
  const health = await checkHealth(context);
  return jsonAnswer(health.body, { status: health.status, headers: { "Cache-Control": "no-store" } });
}
