import type { ProviderSettings } from "../../config/service-config";
import { catalogModels, type ModelCatalog, type ProviderApi, type Route } from "../../config/catalog/model-catalog";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { CallTrace } from "../tracing/call-trace";
import { providerAttempt } from "../tracing/provider-spans";
import type { Span } from "../tracing/span";
import { withTraceHeaders } from "../tracing/tracing";
import { CircuitBreaker, type BreakerState } from "./circuit-breaker";
import { withSoldModelId } from "./sold-model-stream";
import { OpenAiUpstream, type StartedStream } from "./openai-upstream";
import { UpstreamError } from "./upstream-error";

/** What a route's answer came to, and who gave it (the X-Paysvc-Provider header names it). */
export interface Served<T> {
  value: T;
  provider: string;
}

/**
 * Failures that say nothing of the caller's request: the next route may well answer it. A refused request (400,
 * 401, 404...) would be refused by the next provider too, or names a fault of ours to fix, not to route around.
 */
function failsOver(error: unknown): boolean {
  if (!(error instanceof UpstreamError)) return false;
  if (error.failure !== "status") return true;
  // No status: an error sent inside a 200 (a whole answer or a stream's first event).
  return error.status === undefined || error.status >= 500 || error.status === 429 || error.status === 408;
}

/**
 * One route's calls: a whole JSON answer checked by `accept`, or a stream whose first event has arrived; `headers`
 * are the caller's that the route is sent (a native route's; its own configured headers win over them).
 */
export interface RouteCall {
  postJson<T>(
    path: string,
    body: Record<string, unknown> | FormData,
    accept: (answer: Record<string, unknown>) => T,
    headers?: Readonly<Record<string, string>>,
  ): Promise<T>;
  startStream(
    path: string,
    body: Record<string, unknown>,
    headers?: Readonly<Record<string, string>>,
  ): Promise<StartedStream>;
}

/** One route, ready to call: its provider's client with the route's key and headers, and the breaker it shares. */
interface Way {
  route: Route;
  upstream: OpenAiUpstream;
  breaker: CircuitBreaker;
}

/**
 * The routes of one sold model, tried in the catalog's order. A route that fails before anything was sent to the
 * caller (connection refused, no first byte in time, 5xx, 429, an error inside a 200) is followed by the next; a
 * provider whose breaker is open is skipped. The provider is sent its own model id; the caller sees the sold id.
 */
export class ModelRoutes {
  /** The providers of the routes, in order. */
  readonly providers: readonly string[];

  constructor(
    readonly soldId: string,
    private readonly ways: readonly Way[],
    private readonly metrics: ServiceMetrics,
    /** The request these calls are made for, while tracing is on: each attempt is a child span of its span. */
    private readonly trace?: CallTrace,
  ) {
    this.providers = ways.map((way) => way.route.provider);
  }

  /** The same routes, their calls traced as `trace`'s request's (itself without a trace). */
  tracedAs(trace: CallTrace | undefined): ModelRoutes {
    return trace ? new ModelRoutes(this.soldId, this.ways, this.metrics, trace) : this;
  }

  /** A whole JSON answer, checked by `accept` (which throws an UpstreamError for an answer that is a failure). */
  postJson<T = Record<string, unknown>>(
    path: string,
    body: Record<string, unknown> | FormData,
    accept: (answer: Record<string, unknown>) => T = (answer) => answer as T,
    signal?: AbortSignal,
  ): Promise<Served<T>> {
    return this.tryInTurn(signal, (way, span) => this.callOf(way, signal, span).postJson(path, body, accept));
  }

  /** A stream whose first event has arrived, its chunks naming the sold model. */
  startStream(path: string, body: Record<string, unknown>, signal?: AbortSignal): Promise<Served<StartedStream>> {
    return this.tryInTurn(signal, (way, span) => this.callOf(way, signal, span).startStream(path, body));
  }

  /**
   * One call to the routes in turn, each sent what `call` makes of it for the API the route speaks (a caller's API
   * passed through to the routes that speak it natively, a chat completion to the others).
   */
  serve<T>(call: (api: ProviderApi, route: RouteCall) => Promise<T>, signal?: AbortSignal): Promise<Served<T>> {
    return this.tryInTurn(signal, (way, span) => call(way.route.api ?? "chat", this.callOf(way, signal, span)));
  }

  /** One route's calls, sent `span`'s trace context when the attempt is traced. */
  private callOf(way: Way, signal: AbortSignal | undefined, span: Span | undefined): RouteCall {
    const traced = (headers: Readonly<Record<string, string>> | undefined) =>
      span ? withTraceHeaders(headers ?? {}, span) : headers;
    return {
      postJson: async (path, body, accept, headers) => {
        const answer = await way.upstream.postJson(path, this.bodyFor(body, way.route), signal, traced(headers));
        // The caller bought the sold id; whatever the provider calls its model (a dated version) stays with it.
        if (typeof answer.model === "string") {
          span?.setAttribute("gen_ai.response.model", answer.model);
          answer.model = this.soldId;
        }
        return accept(answer);
      },
      startStream: async (path, body, headers) => {
        const started = await way.upstream.startStream(path, this.bodyFor(body, way.route), signal, traced(headers));
        return { ...started, body: withSoldModelId(started.body, this.soldId) };
      },
    };
  }

  private bodyFor(body: Record<string, unknown> | FormData, route: Route): Record<string, unknown> | FormData {
    if (!(body instanceof FormData)) return { ...body, model: route.model };
    body.set("model", route.model);
    return body;
  }

  /**
   * Each route whose provider is not skipped, in order, until one serves. When every provider is skipped, each is
   * tried anyway: the caller's call is the only chance it has, and a breaker only moves calls to another route. A
   * call aborted by `signal` (its payment refused) is no provider's failure and tries no other.
   */
  private async tryInTurn<T>(
    signal: AbortSignal | undefined,
    call: (way: Way, span: Span | undefined) => Promise<T>,
  ): Promise<Served<T>> {
    let lastError: unknown;
    let tried = false;
    for (const way of this.ways) {
      if (!way.breaker.tryAcquire()) continue;
      tried = true;
      const outcome = await this.attempt(way, call, signal);
      if ("served" in outcome) return outcome.served;
      lastError = outcome.failure;
    }
    if (tried) throw lastError;
    for (const way of this.ways) {
      const outcome = await this.attempt(way, call, signal);
      if ("served" in outcome) return outcome.served;
      lastError = outcome.failure;
    }
    throw lastError;
  }

  /** One route's call: served, or a failure the next route may make good; any other error is thrown. */
  private async attempt<T>(
    way: Way,
    call: (way: Way, span: Span | undefined) => Promise<T>,
    signal: AbortSignal | undefined,
  ): Promise<{ served: Served<T> } | { failure: unknown }> {
    const { provider } = way.route;
    const started = performance.now();
    const traced = providerAttempt(this.trace, way.route, this.ways.indexOf(way));
    try {
      const value = await call(way, traced?.span);
      traced?.served(value);
      way.breaker.succeeded();
      this.metrics.providerCall(provider, "ok", (performance.now() - started) / 1000);
      return { served: { value, provider } };
    } catch (error) {
      traced?.failed(error);
      if (signal?.aborted) {
        way.breaker.released();
        throw error;
      }
      this.metrics.providerCall(provider, "failed", (performance.now() - started) / 1000);
      if (!failsOver(error)) {
        way.breaker.released();
        throw error;
      }
      way.breaker.failed();
      return { failure: error };
    }
  }
}

/** The state of one provider, as /health shows it. */
export interface ProviderState {
  provider: string;
  breaker: BreakerState;
  consecutiveFailures: number;
  upstream: OpenAiUpstream;
}

/** Every sold model's routes, built once per process from the catalog; one breaker per provider. */
export class ProviderRoutes {
  private readonly byModel = new Map<string, ModelRoutes>();
  private readonly providers = new Map<string, { breaker: CircuitBreaker; upstream: OpenAiUpstream }>();

  constructor(catalog: ModelCatalog, settings: ProviderSettings, metrics: ServiceMetrics) {
    for (const { model } of catalogModels(catalog)) {
      const ways = model.routes.map((route): Way => {
        let provider = this.providers.get(route.provider);
        if (!provider) {
          provider = { breaker: new CircuitBreaker(settings), upstream: upstreamOf(route, settings) };
          this.providers.set(route.provider, provider);
        }
        return { route, upstream: upstreamOf(route, settings), breaker: provider.breaker };
      });
      this.byModel.set(model.id, new ModelRoutes(model.id, ways, metrics));
    }
  }

  /** The routes of a model of the catalog, their calls traced as the request `trace` names (while tracing is on). */
  of(model: { id: string }, trace?: CallTrace): ModelRoutes {
    const routes = this.byModel.get(model.id);
    if (!routes) throw new Error(`no routes for ${model.id}: not a model of the catalog in force`);
    return routes.tracedAs(trace);
  }

  /** The models that no provider in `up` serves: nothing can answer them now. */
  unserved(up: ReadonlySet<string>): string[] {
    return [...this.byModel].filter(([, routes]) => !routes.providers.some((name) => up.has(name))).map(([id]) => id);
  }

  states(): ProviderState[] {
    return [...this.providers].map(([provider, { breaker, upstream }]) => ({
      provider,
      breaker: breaker.state(),
      consecutiveFailures: breaker.consecutiveFailures,
      upstream,
    }));
  }
}

function upstreamOf(route: Route, settings: ProviderSettings): OpenAiUpstream {
  return new OpenAiUpstream({
    baseUrl: route.baseUrl,
    apiKey: route.apiKey,
    timeoutMs: settings.timeoutMs,
    headers: route.headers,
  });
}
