import { createHash, timingSafeEqual } from "node:crypto";
import type { ServiceConfig } from "../../config/service-config";
import type { ServiceMetrics } from "./service-metrics";
import { ApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { bearerToken } from "../http/bearer-token";

/**
 * GET /metrics: the process's metrics in Prometheus's text format, to `Authorization: Bearer <METRICS_TOKEN>`
 * only; without METRICS_TOKEN there is no such endpoint (404). Each instance serves its own: scrape each one.
 */
export async function serveMetrics(
  context: { config: ServiceConfig; metrics: ServiceMetrics },
  request: ApiRequest,
): Promise<ApiAnswer> {
  const expected = context.config.metricsToken;
  if (expected === undefined) {
    throw new ApiError("not_found", "No endpoint at /metrics: it is served only when METRICS_TOKEN is configured");
  }
  const given = bearerToken(request);
  if (given === undefined || !sameToken(given, expected)) {
    throw new ApiError("invalid_api_key", "GET /metrics needs Authorization: Bearer <METRICS_TOKEN>", {
      headers: { "WWW-Authenticate": 'Bearer realm="metrics"' },
    });
  }
  const { registry } = context.metrics;
  return {
    status: 200,
    headers: { "Content-Type": registry.contentType, "Cache-Control": "no-store" },
    body: await registry.metrics(),
  };
}

/** Compares digests, so the time taken says nothing of the token's length or of how much of it matched. */
function sameToken(given: string, expected: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(given), digest(expected));
}
