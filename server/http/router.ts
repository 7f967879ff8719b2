import type { AppContext } from "../app-context";
import { billRequest } from "../billing/bill-request";
import { bazaarExtension } from "../discovery/bazaar-extension";
import type { CatalogEndpoint } from "../discovery/catalog-endpoint";
import type { Endpoint } from "../endpoints/endpoint";
import { ApiError } from "../errors";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { ApiAnswer } from "./api-answer";
import { answerErrors, type ApiHandler } from "./answer-errors";

/** What a method and path lead to: an endpoint's handler, or an answer that the path has no such method. */
export type RouteMatch = { handle: ApiHandler } | undefined;

/**
 * The route table of the endpoint list: each method and path to its handler, paid ones wrapped in billing with
 * their 402's extensions computed once. HEAD is GET without a body; OPTIONS and other methods on a known path are
 * answered with the methods it has.
 */
export class Router {
  private readonly routes = new Map<string, ApiHandler>();
  private readonly methodsByPath = new Map<string, string[]>();

  constructor(endpoints: readonly Endpoint[], catalog: readonly CatalogEndpoint[], context: () => AppContext) {
    for (const endpoint of endpoints) {
      for (const path of endpoint.paths) {
        const handle = this.handlerOf(endpoint, path, catalog, context);
        this.routes.set(`${endpoint.method} ${path}`, handle);
        if (endpoint.method === "GET") this.routes.set(`HEAD ${path}`, handle);
        const methods = this.methodsByPath.get(path) ?? [];
        methods.push(...(endpoint.method === "GET" ? ["GET", "HEAD"] : [endpoint.method]));
        this.methodsByPath.set(path, methods);
      }
    }
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

  /** The handler of a method and path (no query), or undefined for a path that is no endpoint's. */
  find(method: string, path: string): RouteMatch {
    const handle = this.routes.get(`${method} ${path}`);
    if (handle) return { handle };
    const methods = this.methodsByPath.get(path);
    if (!methods) return undefined;
    const allow = [...methods, "OPTIONS"].join(", ");
    if (method === "OPTIONS") return { handle: async () => ({ status: 204, headers: { allow }, body: "" }) };
    const refusal = new ApiError("method_not_allowed", `${method} is not allowed on ${path}; allowed: ${allow}`, {
      headers: { Allow: allow },
    });
    return { handle: async () => refusal.toAnswer() };
  }

  /** Like `find`, and a path that is no endpoint's is answered 404. */
  answer(method: string, path: string): ApiHandler {
    return this.find(method, path)?.handle ?? (async () => notFound(path));
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
