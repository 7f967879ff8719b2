import type { AppContext } from "./app-context";
import type { PaidEndpoint } from "./endpoint";
import { isApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import { checkedFirst, type RouteWrapper } from "../http/route-wrappers";
import { callerGroup } from "../windows/caller-group";

type QuoteContext = Pick<AppContext, "quoteLimits" | "clientAddresses" | "metrics">;
type PaidContext = QuoteContext & Pick<AppContext, "payments">;

/** Requests counted as unpaid before their body was read: a refusal of their credential does not count them again. */
const counted = new WeakSet<ApiRequest>();

/**
 * A paid route's unpaid requests counted per caller before any of the body is read (quote-limiter.ts): those with
 * no credential of any payment method (each asks its price), and those whose credential does not even decode (it
 * alone says it will be granted nothing). A caller over the limit is answered 429 and counted as refused.
 * Requests whose payment or key is refused later are counted then (countUngranted).
 */
export function quoteLimited(endpoint: PaidEndpoint, context: () => PaidContext): RouteWrapper {
  const [path] = endpoint.paths;
  return checkedFirst((request) => {
    const quoteContext = context();
    if (!quoteContext.quoteLimits.counts || quoteContext.payments.carriesPlausible(endpoint, request)) return;
    counted.add(request);
    countUnpaid(quoteContext, path, request);
  });
}

/**
 * A request whose payment or key was not granted (refused, unknown, junk): unpaid work for its caller, counted as a
 * quote unless it already was; throws the 429 when the caller is over the limit.
 */
export function countUngranted(context: QuoteContext, path: string, request: ApiRequest): void {
  if (!context.quoteLimits.counts || counted.has(request)) return;
  counted.add(request);
  countUnpaid(context, path, request);
}

function countUnpaid({ quoteLimits, clientAddresses, metrics }: QuoteContext, path: string, request: ApiRequest) {
  try {
    quoteLimits.admit(callerGroup(clientAddresses.resolve(request)));
  } catch (error) {
    if (isApiError(error)) metrics.failed(path, error.status, error.code, "refused");
    throw error;
  }
}
