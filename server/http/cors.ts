import type { CorsOrigins } from "../../config/cors-origins";
import type { ApiAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";

/**
 * What a page may send: the body's type, a prepaid key, an x402 payment (v2 and v1 headers), the request header
 * the official `@x402/fetch` wrapper adds to its paid retry (without it, its preflight is refused), and the Messages
 * API's key and version headers (a prepaid key as `x-api-key`). A fixed list: echoing Access-Control-Request-Headers
 * would allow whatever a page asks.
 */
export const ALLOWED_HEADERS =
  "Content-Type, Authorization, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Access-Control-Expose-Headers, X-Api-Key, Anthropic-Version, Anthropic-Beta";

/**
 * What a page may read besides the CORS-safelisted headers: the price and the settlement (x402's and MPP's),
 * timings, cost, balance.
 */
export const EXPOSED_HEADERS =
  "PAYMENT-REQUIRED, PAYMENT-RESPONSE, X-PAYMENT-RESPONSE, WWW-Authenticate, Payment-Receipt, Server-Timing, X-Paysvc-Cost, X-Paysvc-Prepaid-Remaining, X-Paysvc-Provider";

/** How long a browser may reuse a preflight's answer (Chromium caps it at 2 hours, Firefox at 24). */
export const MAX_AGE_SECONDS = "86400";

/**
 * CORS for every API answer, decided from the configuration once. With `*` every answer carries the same headers,
 * Origin or not, so caches need no Vary; with a list, an allowed Origin is echoed and every answer says
 * `Vary: Origin`. Access-Control-Allow-Credentials is never sent: the API reads no cookies.
 */
export class CorsPolicy {
  private readonly anyOrigin: boolean;
  private readonly allowed: ReadonlySet<string>;

  constructor(readonly origins: CorsOrigins) {
    this.anyOrigin = origins === "*";
    this.allowed = new Set(origins === "*" ? [] : origins);
  }

  /** Whether a page of this Origin may read the answers (null: the request has no Origin). */
  allows(origin: string | null): boolean {
    return this.anyOrigin || (origin !== null && this.allowed.has(origin));
  }

  /** Adds the CORS headers to an answer, in place: each answer owns its headers object. */
  apply(answer: ApiAnswer, origin: string | null): ApiAnswer {
    const headers = answer.headers;
    if (this.anyOrigin) {
      headers["access-control-allow-origin"] = "*";
      headers["access-control-expose-headers"] = EXPOSED_HEADERS;
      return answer;
    }
    if (origin !== null && this.allowed.has(origin)) {
      headers["access-control-allow-origin"] = origin;
      headers["access-control-expose-headers"] = EXPOSED_HEADERS;
    }
    // The answer depends on the Origin, allowed or not: a shared cache must keep it apart.
    headers.vary = headers.vary ? `${headers.vary}, Origin` : "Origin";
    return answer;
  }

  /**
   * The answer to OPTIONS on a path whose methods are `allow` (OPTIONS included): 204 with Allow, as without
   * CORS; a preflight of an allowed Origin also gets the methods, the fixed headers and the max age.
   */
  options(request: ApiRequest, allow: string): ApiAnswer {
    const origin = request.headers.get("origin");
    const headers: Record<string, string> = { allow };
    if (request.headers.get("access-control-request-method") !== null && origin !== null && this.allows(origin)) {
      headers["access-control-allow-methods"] = allow;
      headers["access-control-allow-headers"] = ALLOWED_HEADERS;
      headers["access-control-max-age"] = MAX_AGE_SECONDS;
    }
    return this.apply({ status: 204, headers, body: "" }, origin);
  }
}
