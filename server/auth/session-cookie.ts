import type { ApiRequest } from "../http/api-request";
import type { ClientAddressResolver } from "../http/client-address";

/**
 * A kind of browser session (the operator's, a signed-in wallet's): its cookie's name, the path its plain-HTTP
 * cookie is sent to, and how long a session lasts. Over HTTPS the cookie is `__Host-<name>` (the browser then takes
 * it only from a secure origin, for this host alone, Path=/: no sibling subdomain and no plain-HTTP page can set or
 * shadow it); else `<name>` on its path.
 */
export interface SessionKind {
  name: string;
  plainPath: string;
  seconds: number;
}

/**
 * The Set-Cookie of a session (a value) or of its end (none, Max-Age=0): HttpOnly, SameSite=Strict. Over HTTPS
 * `__Host-` prefixed, Secure, Path=/ and no Domain, as the prefix requires.
 */
export function sessionCookie(kind: SessionKind, value: string | undefined, secure: boolean): string {
  return [
    `${secure ? `__Host-${kind.name}` : kind.name}=${value ?? ""}`,
    secure ? "Path=/" : `Path=${kind.plainPath}`,
    `Max-Age=${value === undefined ? 0 : kind.seconds}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}

/**
 * A session's cookie value in a Cookie header: the `__Host-` one when there is one. The plain one is read too (the
 * page cannot tell how its visitor reached it): whichever is read must carry a signature only the server makes.
 */
export function sessionValue(cookieHeader: string | null | undefined, kind: SessionKind): string | undefined {
  return cookieValue(cookieHeader, `__Host-${kind.name}`) ?? cookieValue(cookieHeader, kind.name);
}

/** A cookie's value in a Cookie header; undefined when it is not there. */
export function cookieValue(cookieHeader: string | null | undefined, name: string): string | undefined {
  for (const pair of (cookieHeader ?? "").split(";")) {
    const separator = pair.indexOf("=");
    if (separator > 0 && pair.slice(0, separator).trim() === name) return pair.slice(separator + 1).trim();
  }
  return undefined;
}

/**
 * Whether the caller reached us over HTTPS: PUBLIC_BASE_URL says so, or a trusted proxy (TRUSTED_PROXIES) says in
 * X-Forwarded-Proto or Forwarded that its client used https. Anyone else's say is ignored.
 */
export function reachedOverHttps(
  publicBaseUrl: string | undefined,
  request: ApiRequest,
  clientAddresses: ClientAddressResolver,
): boolean {
  if (publicBaseUrl?.startsWith("https://") || new URL(request.url).protocol === "https:") return true;
  if (!clientAddresses.fromTrustedProxy(request)) return false;
  const forwardedProto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const forwarded = /(?:^|[;,\s])proto=("?)https\1(?:[;,\s]|$)/i.test(request.headers.get("forwarded") ?? "");
  return forwardedProto === "https" || forwarded;
}
