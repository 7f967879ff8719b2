import type { AppContext } from "../app-context";
import { billRequest } from "../billing/bill-request";
import { bazaarExtension } from "../discovery/bazaar-extension";
import type { CatalogEndpoint } from "../discovery/catalog-endpoint";
import type { Endpoint } from "../endpoints/endpoint";
import { ApiError } from "../errors";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { ApiAnswer } from "./api-answer";
import { answerErrors, type ApiHandler } from "./answer-errors";
import { CorsPolicy } from "./cors";

/** What a method and path lead to: an endpoint's handler, or an answer that the path has no such method. */
export type RouteMatch = { handle: ApiHandler } | undefined;

/**
 * The route table of the endpoint list: each method and path to its handler, paid ones wrapped in billing with
 * their 402's extensions computed once. HEAD is GET without a body; OPTIONS and other methods on a known path are
 * answered with the methods it has. Every answer, 404s and 405s included, passes through CORS (cors.ts).
 */
export class Router {
  private readonly routes = new Map<string, ApiHandler>();
  /** Each path's methods, OPTIONS included, as Allow (and Access-Control-Allow-Methods) lists them. */
  private readonly allowByPath = new Map<string, string>();
  private corsPolicy: CorsPolicy | undefined;

  constructor(
    endpoints: readonly Endpoint[],
    catalog: readonly CatalogEndpoint[],
    private readonly context: () => AppContext,
  ) {
    const methodsByPath = new Map<string, string[]>();
    for (const endpoint of endpoints) {
      for (const path of endpoint.paths) {
        const handle = this.withCorsHandler(this.handlerOf(endpoint, path, catalog, context));
        this.routes.set(`${endpoint.method} ${path}`, handle);
        if (endpoint.method === "GET") this.routes.set(`HEAD ${path}`, handle);
        const methods = methodsByPath.get(path) ?? [];
        methods.push(...(endpoint.method === "GET" ? ["GET", "HEAD"] : [endpoint.method]));
        methodsByPath.set(path, methods);
      }
    }
    for (const [path, methods] of methodsByPath) this.allowByPath.set(path, [...methods, "OPTIONS"].join(", "));
  }

  /**
   * The endpoint's handler, its errors answered. Billing counts a paid request in the metrics; a free one is
   * counted here, from its answer.
   */
  private handlerOf(
    endpoint: Endpoint,
    path: string,
    catalog: readonly CatalogEndpoint[],
    context: () => AppContext,
  ): ApiHandler {
    if (endpoint.kind === "free") {
      const handle = answerErrors(async (request) => endpoint.handle(context(), request));
      return async (request) => {
        const answer = await handle(request);
        countFreeAnswer(context().metrics, endpoint.paths[0], answer);
        return answer;
      };
    }
    const entry = catalog.find((candidate) => candidate.path === path && candidate.method === endpoint.method);
    const extensions = entry && bazaarExtension(entry);
    return answerErrors((request) => billRequest(context(), endpoint, request, extensions));
  }

  /** The configuration's CORS policy, built again only when the configuration is another. */
  private cors(): CorsPolicy {
    const origins = this.context().config.corsOrigins;
    if (this.corsPolicy?.origins !== origins) this.corsPolicy = new CorsPolicy(origins);
    return this.corsPolicy;
  }

  private withCorsHandler(handle: ApiHandler): ApiHandler {
    return (request) => handle(request).then((answer) => this.withCors(answer, request.headers.get("origin")));
  }

  /** An answer with the CORS headers of a request's Origin, for answers made outside the handlers. */
  withCors(answer: ApiAnswer, origin: string | null): ApiAnswer {
    return this.cors().apply(answer, origin);
  }

  /** The handler of a method and path (no query), or undefined for a path that is no endpoint's. */
  find(method: string, path: string): RouteMatch {
    const handle = this.routes.get(`${method} ${path}`);
    if (handle) return { handle };
    const allow = this.allowByPath.get(path);
    if (allow === undefined) return undefined;
    if (method === "OPTIONS") return { handle: async (request) => this.cors().options(request, allow) };
    const refusal = new ApiError("method_not_allowed", `${method} is not allowed on ${path}; allowed: ${allow}`, {
      headers: { Allow: allow },
    });
    return { handle: async (request) => this.withCors(refusal.toAnswer(), request.headers.get("origin")) };
  }

  /** Like `find`, and a path that is no endpoint's is answered 404. */
  answer(method: string, path: string): ApiHandler {
    return (
      this.find(method, path)?.handle ??
      (async (request) => this.withCors(notFound(path), request.headers.get("origin")))
    );
  }
}

function notFound(path: string): ApiAnswer {
  return new ApiError("not_found", `No endpoint at ${path}; see /openapi.json for the endpoints`).toAnswer();
}

/** A free endpoint's answer: served, or an error, whose code the answer's JSON body names. */
function countFreeAnswer(metrics: ServiceMetrics, endpoint: string, answer: ApiAnswer): void {
  if (answer.status < 400) return metrics.request(endpoint, "served");
  let code: string | undefined;
  if (typeof answer.body === "string") {
    try {
      code = (JSON.parse(answer.body) as { error?: { code?: string } }).error?.code;
    } catch {
      code = undefined;
    }
  }
  metrics.failed(endpoint, answer.status, code, "invalid");
}
