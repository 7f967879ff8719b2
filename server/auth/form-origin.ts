import type { ApiRequest } from "../http/api-request";

/**
 * Whether a POST made with a session cookie (the operator's forms, a signed-in wallet's page) comes from this
 * site's own page, as the browser says in `Origin`:
 * - an Origin must be PUBLIC_BASE_URL's origin, or name the host the request was sent to (its Host header); over
 *   HTTPS, with the https scheme. `Origin: null` (a sandboxed frame, a page of no origin) is refused.
 * - no Origin at all: every browser in use sends Origin on a form POST, same-origin too, so its absence is a
 *   client such as curl, which carries no one else's cookie and must give the token itself; it is admitted,
 *   unless `Sec-Fetch-Site` says the request is another site's.
 * Behind a proxy that rewrites Host, PUBLIC_BASE_URL is what names the site.
 */
export function fromThisSite(request: ApiRequest, publicBaseUrl: string | undefined, https: boolean): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) {
    const site = request.headers.get("sec-fetch-site");
    return site !== "cross-site" && site !== "same-site";
  }
  const given = parsedOrigin(origin);
  if (!given) return false;
  if (publicBaseUrl && parsedOrigin(publicBaseUrl)?.origin === given.origin) return true;
  const host = request.headers.get("host");
  if (!host || (https && given.protocol !== "https:")) return false;
  // The Host header as a URL of the Origin's scheme says it: lower case, a default port dropped.
  return parsedOrigin(`${given.protocol}//${host}`)?.host === given.host;
}

function parsedOrigin(value: string): URL | undefined {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined;
  } catch {
    return undefined;
  }
}
