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

/**
 * Endpoint 15: the state of the database, each facilitator and each model provider of the catalog (its probe and
 * its circuit breaker: `closed` serving, `open` skipped after failing, `half_open` about to be tried again).
 * `facilitator` is down when no facilitator is up.
 * `upstream` is down when some model has no provider up: a provider down whose models fail over to another leaves
 * the service whole, and a liveness probe must not take it out of service for that. 503 when any of the three is
 * down.
 */
export async function checkHealth(
  context: Pick<AppContext, "providers" | "storage" | "gateway" | "config" | "writes">,
): Promise<{ status: number; body: unknown }> {
  const states = context.providers.states();
  const { routes } = context.gateway;
  const [database, facilitatorProbes, ...probes] = await Promise.all([
    probe(() => context.storage.ping()),
    Promise.all(routes.map((route) => probe(() => context.gateway.probe(route)))),
    ...states.map((state) => probe(() => state.upstream.probe(PROBE_TIMEOUT_MS))),
  ]);
  const facilitators = Object.fromEntries(
    routes.map((route, index) => [
      route.name,
      {
        ...facilitatorProbes[index]!,
        breaker: route.breaker.state(),
        consecutive_failures: route.breaker.consecutiveFailures,
      },
    ]),
  );
  const facilitatorsUp = facilitatorProbes.filter((state) => state.status === "up").length;
  const facilitatorLatency = Math.max(0, ...facilitatorProbes.map((state) => state.latency_ms));
  // Payments go through while one facilitator is up: the others are failover.
  const facilitator: ComponentState =
    facilitatorsUp > 0
      ? { status: "up", latency_ms: facilitatorLatency }
      : {
          status: "down",
          latency_ms: facilitatorLatency,
          error: facilitatorProbes
            .map((state, index) => `${routes[index]!.name}: ${"error" in state ? state.error : "up"}`)
            .join("; "),
        };
  const providers = Object.fromEntries(
    states.map((state, index) => [
      state.provider,
      { ...probes[index]!, breaker: state.breaker, consecutive_failures: state.consecutiveFailures },
    ]),
  );
  const up = new Set(states.filter((_, index) => probes[index]!.status === "up").map((state) => state.provider));
  const unserved = context.providers.unserved(up);
  const latency_ms = Math.max(0, ...probes.map((component) => component.latency_ms));
  const upstream: ComponentState =
    unserved.length === 0
      ? { status: "up", latency_ms }
      : { status: "down", latency_ms, error: `no provider up for ${unserved.join(", ")}` };
  const healthy = [database, facilitator, upstream].every((component) => component.status === "up");
  return {
    status: healthy ? 200 : 503,
    body: {
      status: healthy ? "ok" : "degraded",
      network: context.config.network.id,
      version: SERVICE_VERSION,
      checks: {
        // Records of what already happened (a settlement, a prepaid charge) waiting for the database to be back.
        database: { engine: context.storage.engine, ...database, pending_writes: context.writes.pending },
        facilitator,
        facilitators,
        upstream,
        providers,
      },
    },
  };
}

/** Endpoint 15 as an HTTP answer, never cached. */
export async function healthResponse(
  context: Pick<AppContext, "providers" | "storage" | "gateway" | "config" | "writes">,
): Promise<ApiAnswer> {
  const health = await checkHealth(context);
  return jsonAnswer(health.body, { status: health.status, headers: { "Cache-Control": "no-store" } });
}
