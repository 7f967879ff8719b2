import { SERVICE_VERSION } from "../../config/version";
import type { AppContext } from "../context/app-context";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import { probeFacilitator } from "../payment/facilitator-capabilities";
import { PROBE_TIMEOUT_MS, ProbeCache, type ProbeResult } from "./probe-cache";

type HealthContext = Pick<AppContext, "providers" | "storage" | "gateway" | "config" | "writes">;

/** One cache of probes per process (per gateway: tests build several contexts in one process). */
const caches = new WeakMap<object, ProbeCache>();
// The database decides whether this instance can serve at all: asked at most once a second, not once a period.
const DATABASE_PERIOD_MS = 1000;

function cacheOf(context: HealthContext): ProbeCache {
  let cache = caches.get(context.gateway);
  if (!cache) caches.set(context.gateway, (cache = new ProbeCache(context.config.healthProbeMs)));
  return cache;
}

/**
 * Endpoint 15: the state of the database, each facilitator and each model provider of the catalog (its probe,
 * shared for HEALTH_PROBE_SECONDS by every /health of the process, and its circuit breaker, read now: `closed`
 * serving, `open` skipped after failing, `half_open` about to be tried again).
 * 503 only when this instance cannot serve anything: its database is down (draining answers 503 before this).
 * A shared dependency down (every facilitator: paid calls wait; a provider: its models fail over or wait) is 200
 * with `status: "degraded"` and `down` naming it, so a load balancer does not pull every instance at once for what
 * none of them can fix. `facilitator` is down when no facilitator is up; `upstream` when some model has no
 * provider up. The errors are in the answer for the operator's page; the public answer leaves them out.
 */
export async function checkHealth(context: HealthContext): Promise<{ status: number; body: HealthBody }> {
  const cache = cacheOf(context);
  const states = context.providers.states();
  const { routes } = context.gateway;
  const [database, facilitatorProbed, probed] = await Promise.all([
    cache.get("database", () => context.storage.ping(), DATABASE_PERIOD_MS),
    Promise.all(
      routes.map((route) =>
        cache.get(`facilitator ${route.name}`, () => probeFacilitator(route, context.gateway.network.id)),
      ),
    ),
    Promise.all(
      states.map((state) => cache.get(`provider ${state.provider}`, () => state.upstream.probe(PROBE_TIMEOUT_MS))),
    ),
  ]);
  // A probe is as old as the period; a breaker opened by real calls since is newer news, and says down too.
  const facilitatorProbes = facilitatorProbed.map((probe, index) => withBreaker(probe, routes[index]!.breaker.state()));
  const probes = probed.map((probe, index) => withBreaker(probe, states[index]!.breaker));
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
  const facilitator: ProbeResult =
    facilitatorsUp > 0
      ? { status: "up", latency_ms: facilitatorLatency }
      : { status: "down", latency_ms: facilitatorLatency, error: "no facilitator up" };
  const providers = Object.fromEntries(
    states.map((state, index) => [
      state.provider,
      { ...probes[index]!, breaker: state.breaker, consecutive_failures: state.consecutiveFailures },
    ]),
  );
  const up = new Set(states.filter((_, index) => probes[index]!.status === "up").map((state) => state.provider));
  const unserved = context.providers.unserved(up);
  const latency_ms = Math.max(0, ...probes.map((component) => component.latency_ms));
  const upstream: ProbeResult =
    unserved.length === 0
      ? { status: "up", latency_ms }
      : { status: "down", latency_ms, error: `no provider up for ${unserved.join(", ")}` };
  const down = [
    ...routes
      .filter((_, index) => facilitatorProbes[index]!.status === "down")
      .map((route) => `facilitator ${route.name}`),
    ...states.filter((state) => !up.has(state.provider)).map((state) => `provider ${state.provider}`),
  ];
  const serving = database.status === "up";
  return {
    status: serving ? 200 : 503,
    body: {
      status: !serving ? "unavailable" : down.length > 0 ? "degraded" : "ok",
      ...(serving ? {} : { down: ["database"] }),
      ...(serving && down.length > 0 ? { down } : {}),
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

function withBreaker(probe: ProbeResult, breaker: string): ProbeResult {
  if (probe.status === "down" || breaker !== "open") return probe;
  return {
    status: "down",
    latency_ms: probe.latency_ms,
    error: "its circuit breaker is open: calls to it keep failing",
  };
}

export interface HealthBody {
  status: "ok" | "degraded" | "unavailable";
  down?: string[];
  network: string;
  version: string;
  checks: Record<string, object>;
}

/** The answer without the probes' error text, which may name internal hosts (it is in the log). */
function withoutErrors(value: unknown): unknown {
  if (Array.isArray(value) || typeof value !== "object" || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== "error")
      .map(([key, inner]) => [key, withoutErrors(inner)]),
  );
}

/** Endpoint 15 as an HTTP answer, never cached by anyone else. */
export async function healthResponse(context: HealthContext): Promise<ApiAnswer> {
  const health = await checkHealth(context);
  return jsonAnswer(withoutErrors(health.body), { status: health.status, headers: { "Cache-Control": "no-store" } });
}
