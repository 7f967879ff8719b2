import type { AppContext } from "../app-context";
import { carriesX402Payment, prepaidCodeOf } from "../billing/payment-carried";
import type { PaidEndpoint } from "../endpoints/endpoint";
import { isApiError } from "../errors";
import { checkedFirst, type RouteWrapper } from "../http/route-wrappers";
import { callerGroup } from "../windows/caller-group";

/**
 * A paid route's unpaid requests (no payment, no prepaid key: each asks its price) counted per caller before any of
 * the body is read (quote-limiter.ts); a caller over the limit is answered 429 and counted as refused.
 */
export function quoteLimited(
  endpoint: PaidEndpoint,
  context: () => Pick<AppContext, "quoteLimits" | "clientAddresses" | "metrics">,
): RouteWrapper {
  const [path] = endpoint.paths;
  return checkedFirst((request) => {
    const { quoteLimits, clientAddresses, metrics } = context();
    if (!quoteLimits.counts || prepaidCodeOf(endpoint, request) !== undefined || carriesX402Payment(request)) return;
    try {
      quoteLimits.admit(callerGroup(clientAddresses.resolve(request)));
    } catch (error) {
      if (isApiError(error)) metrics.failed(path, error.status, error.code, "refused");
      throw error;
    }
  });
}
