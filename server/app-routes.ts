import type { AppContext } from "./app-context";
import { billRequest } from "./billing/bill-request";
import { bazaarExtension } from "./discovery/bazaar-extension";
import type { CatalogEndpoint } from "./discovery/catalog-endpoint";
import type { Endpoint } from "./endpoints/endpoint";
import { isApiError } from "./errors";
import type { ApiAnswer } from "./http/api-answer";
import { answerErrors } from "./http/answer-errors";
import type { HttpRoute } from "./http/router";
import type { ServiceMetrics } from "./metrics/service-metrics";

/**
 * The app's routes, composed where the app is assembled: a paid endpoint is wrapped in billing (which counts it in
 * the metrics), with its 402's extensions computed once; a free one is counted here, from its answer.
 */
export function appRoutes(
  endpoints: readonly Endpoint[],
  catalog: readonly CatalogEndpoint[],
  context: () => AppContext,
): HttpRoute[] {
  return endpoints.flatMap((endpoint) =>
    endpoint.paths.map((path): HttpRoute => {
      if (endpoint.kind === "free") {
        const handle = answerErrors(async (request) => endpoint.handle(context(), request));
        return {
          method: endpoint.method,
          path,
          handle: async (request) => {
            const answer = await handle(request);
            countFreeAnswer(context().metrics, endpoint.paths[0], answer);
            return answer;
          },
        };
      }
      const entry = catalog.find((candidate) => candidate.path === path && candidate.method === endpoint.method);
      const extensions = entry && bazaarExtension(entry);
      return {
        method: endpoint.method,
        path,
        handle: (request) => {
          const { errorAnswer, challengeAnswer } = endpoint;
          let billed = billRequest(context(), endpoint, request, extensions);
          // An API with a payment error shape of its own words the 402s billing answers with in it.
          if (challengeAnswer)
            billed = billed.then((answer) => (answer.status === 402 ? challengeAnswer(answer) : answer));
          if (!errorAnswer) return billed;
          // An API with an error shape of its own answers errors in it.
          return billed.catch((error: unknown) => {
            if (isApiError(error)) return errorAnswer(error);
            throw error;
          });
        },
      };
    }),
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
