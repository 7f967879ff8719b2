import { ApiError, isApiError } from "../core/errors";
import { whenAnswerEnds } from "../http/answer-end";
import type { RouteWrapper } from "../http/route-wrappers";
import type { ServiceMetrics } from "../metrics/service-metrics";
import { callerGroup } from "../windows/caller-group";
import { CallerPlaces } from "../windows/caller-places";
import { atOnceHeaders } from "./limit-headers";
import type { ClientAddressResolver } from "../http/client-address";

type ShareContext = { providerShares: ProviderShares; clientAddresses: ClientAddressResolver; metrics: ServiceMetrics };

/**
 * The requests each caller (an IPv6 one by its /64) has under way on the routes that call a provider, in this
 * process. The process keeps a pool of connections to each provider; a caller that opened streams and read none of
 * them, or sent many slow calls at once, would otherwise hold as much of it as it liked and leave every other caller
 * waiting for a connection. Counted in memory, as the pool is the process's own.
 */
export class ProviderShares {
  private readonly running: CallerPlaces;

  constructor(
    /** Requests per caller at once; PROVIDER_CALLS_PER_ADDRESS (0: not counted). */
    readonly perCaller: number,
    private readonly refused: () => void = () => {},
  ) {
    this.running = new CallerPlaces(perCaller);
  }

  /** Takes one of the caller's places; throws the 429 when it has none left. Returns the place's release. */
  take(caller: string): () => void {
    if (this.perCaller === 0) return () => {};
    const release = this.running.take(caller);
    if (!release) {
      this.refused();
      throw new ApiError(
        "rate_limit_exceeded",
        `Too many requests at once: this address has ${this.perCaller} requests to models under way, the most it may have; retry when one has ended (read its answers). Nothing was charged.`,
        {
          headers: { "Retry-After": "1", ...atOnceHeaders(this.perCaller) },
        },
      );
    }
    return release;
  }

  /** The requests under way of `caller`. */
  runningOf(caller: string): number {
    return this.running.heldBy(caller);
  }
}

/**
 * A route that calls a provider: each request holds one of its caller's places from before its body is read until
 * its answer has ended (a stream's last byte read, or its caller gone). `path`: named in the metrics of a refusal
 * (a paid route's; a free route counts its answers itself).
 */
export function providerShared(context: () => ShareContext, path?: string): RouteWrapper {
  return (next) => async (request) => {
    const { providerShares, clientAddresses, metrics } = context();
    let release: () => void;
    try {
      release = providerShares.take(callerGroup(clientAddresses.resolve(request)));
    } catch (error) {
      if (path !== undefined && isApiError(error)) metrics.failed(path, error.status, error.code, "refused");
      throw error;
    }
    try {
      return whenAnswerEnds(await next(request), release);
    } catch (error) {
      release();
      throw error;
    }
  };
}
