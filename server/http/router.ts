import type { CorsOrigins } from "../../config/cors-origins";
import { ApiError } from "../core/errors";
import type { ApiAnswer } from "./api-answer";
import { errorAnswer } from "./api-answer";
import { answerErrors, type ApiHandler } from "./answer-errors";
import { CorsPolicy } from "./cors";
import { composeRoute, type RouteWrapper } from "./route-wrappers";

/** One method at one path, and what answers it. */
export interface HttpRoute {
  method: "GET" | "POST";
  path: string;
  handle: ApiHandler;
}

/**
 * The route table: each method and path to its handler, composed with the two wrappers every route has (its errors
 * answered, answer-errors.ts; CORS, cors.ts). HEAD is GET without a body; OPTIONS and other methods on a known path
 * are answered with the methods it has. Every answer, 404s and 405s included, passes through CORS. What else a route
 * does (billing, limits, metrics) is the app's to compose (app-routes.ts, route-wrappers.ts).
 */
export class Router {
  private readonly routes = new Map<string, ApiHandler>();
  /** Each path's methods, OPTIONS included, as Allow (and Access-Control-Allow-Methods) lists them. */
  private readonly allowByPath = new Map<string, string>();
  private corsPolicy: CorsPolicy | undefined;

  constructor(
    routes: readonly HttpRoute[],
    private readonly corsOrigins: () => CorsOrigins,
  ) {
    const methodsByPath = new Map<string, string[]>();
    for (const route of routes) {
      const handle = composeRoute(route.handle, this.corsWrapper, answerErrors);
      this.routes.set(`${route.method} ${route.path}`, handle);
      if (route.method === "GET") this.routes.set(`HEAD ${route.path}`, handle);
      const methods = methodsByPath.get(route.path) ?? [];
      methods.push(...(route.method === "GET" ? ["GET", "HEAD"] : [route.method]));
      methodsByPath.set(route.path, methods);
    }
    for (const [path, methods] of methodsByPath) this.allowByPath.set(path, [...methods, "OPTIONS"].join(", "));
  }

  /** The configuration's CORS policy, built again only when the configuration is another. */
  private cors(): CorsPolicy {
    const origins = this.corsOrigins();
    if (this.corsPolicy?.origins !== origins) this.corsPolicy = new CorsPolicy(origins);
    return this.corsPolicy;
  }

  /** Every route's answers, failures included, with the CORS headers of the request's Origin. */
  private readonly corsWrapper: RouteWrapper = (next) => (request) =>
    next(request).then((answer) => this.withCors(answer, request.headers.get("origin")));

  /** An answer with the CORS headers of a request's Origin, for answers made outside the handlers. */
  withCors(answer: ApiAnswer, origin: string | null): ApiAnswer {
    return this.cors().apply(answer, origin);
  }

  /** Whether a route answers this method at this path (no query). */
  has(method: string, path: string): boolean {
    return this.routes.has(`${method} ${path}`);
  }

  /**
   * The handler of a method and path (no query): its route's; for a path of other methods, the preflight (OPTIONS)
   * or a 405 naming them; for a path that is no route's, a 404.
   */
  answer(method: string, path: string): ApiHandler {
    const handle = this.routes.get(`${method} ${path}`);
    if (handle) return handle;
    const allow = this.allowByPath.get(path);
    if (allow === undefined) return async (request) => this.withCors(notFound(path), request.headers.get("origin"));
    if (method === "OPTIONS") return async (request) => this.cors().options(request, allow);
    const refusal = new ApiError("method_not_allowed", `${method} is not allowed on ${path}; allowed: ${allow}`, {
      headers: { Allow: allow },
    });
    return async (request) => this.withCors(errorAnswer(refusal), request.headers.get("origin"));
  }
}

function notFound(path: string): ApiAnswer {
  return errorAnswer(new ApiError("not_found", `No endpoint at ${path}; see /openapi.json for the endpoints`));
}
