import type { AppContext } from "../app-context";
import { billRequest } from "../billing/bill-request";
import { bazaarExtension } from "../discovery/bazaar-extension";
import type { CatalogEndpoint } from "../discovery/catalog-endpoint";
import type { Endpoint } from "../endpoints/endpoint";
import { ApiError } from "../errors";
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
        this.routes.set(`${endpoint.method} ${path}`, answerErrors(handle));
        if (endpoint.method === "GET") this.routes.set(`HEAD ${path}`, answerErrors(handle));
        const methods = this.methodsByPath.get(path) ?? [];
        methods.push(...(endpoint.method === "GET" ? ["GET", "HEAD"] : [endpoint.method]));
        this.methodsByPath.set(path, methods);
      }
    }
  }

  private handlerOf(
    endpoint: Endpoint,
    path: string,
    catalog: readonly CatalogEndpoint[],
    context: () => AppContext,
  ): ApiHandler {
    if (endpoint.kind === "free") return async (request) => endpoint.handle(context(), request);
    const entry = catalog.find((candidate) => candidate.path === path && candidate.method === endpoint.method);
    const extensions = entry && bazaarExtension(entry);
    return (request) => billRequest(context(), endpoint, request, extensions);
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
