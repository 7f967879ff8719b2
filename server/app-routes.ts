import type { AppContext } from "./context/app-context";
import { billRequest } from "./context/bill-request";
import { bazaarExtension } from "./discovery/bazaar-extension";
import type { CatalogEndpoint } from "./discovery/catalog-endpoint";
import type { Endpoint, FreeEndpoint, PaidEndpoint } from "./context/endpoint";
import type { ApiAnswer } from "./http/api-answer";
import { answerErrors } from "./http/answer-errors";
import type { HttpRoute } from "./http/router";
import { answersSeenBy, challengesAnsweredBy, composeRoute, errorsAnsweredBy } from "./http/route-wrappers";
import { providerShared } from "./limits/provider-share";
import { quoteLimited } from "./context/quote-limited";
import type { ServiceMetrics } from "./metrics/service-metrics";

/**
 * The app's routes, each its endpoint's handler composed with what the route needs around it (http/route-wrappers.ts;
 * the router adds CORS and the errors every route answers the same way). A free endpoint is counted in the metrics
 * from its answer; a paid one is billed (which counts it), its unpaid requests limited per caller, and its errors and
 * 402s answered in its API's shape where it has one of its own. A route that calls a provider holds one of its
 * caller's places there until its answer ends.
 */
export function appRoutes(
  endpoints: readonly Endpoint[],
  catalog: readonly CatalogEndpoint[],
  context: () => AppContext,
): HttpRoute[] {
  return endpoints.flatMap((endpoint) =>
    endpoint.paths.map((path): HttpRoute => {
      const { method } = endpoint;
      if (endpoint.kind === "free") return { method, path, handle: freeRoute(endpoint, context) };
      const entry = catalog.find((candidate) => candidate.path === path && candidate.method === method);
      return { method, path, handle: paidRoute(endpoint, entry && bazaarExtension(entry), context) };
    }),
  );
}

/** A free route: its handler given what of the context it declares it uses, picked once per context. */
function freeRoute(endpoint: FreeEndpoint, context: () => AppContext) {
  let from: AppContext | undefined;
  let bound: Partial<AppContext> = {};
  const uses = () => {
    const current = context();
    if (current !== from) {
      from = current;
      bound = Object.fromEntries(endpoint.uses.map((name) => [name, current[name]]));
    }
    return bound as AppContext;
  };
  return composeRoute(
    async (request) => endpoint.handle(uses(), request),
    answersSeenBy((answer) => countFreeAnswer(context().metrics, endpoint.paths[0], answer)),
    // Inside the count: an error is counted as the answer it becomes.
    answerErrors,
    endpoint.uses.includes("providers") ? providerShared(context) : undefined,
  );
}

/** `extensions`: the 402's extensions of the path (its bazaar schema), computed once. */
function paidRoute(endpoint: PaidEndpoint, extensions: Record<string, unknown> | undefined, context: () => AppContext) {
  const { errorAnswer, challengeAnswer } = endpoint;
  return composeRoute(
    (request) => billRequest(context(), endpoint, request, extensions),
    errorAnswer && errorsAnsweredBy(errorAnswer),
    challengeAnswer && challengesAnsweredBy(challengeAnswer),
    quoteLimited(endpoint, context),
    endpoint.callsProvider ? providerShared(context, endpoint.paths[0]) : undefined,
  );
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
