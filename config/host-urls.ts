/**
 * URLs that carry a credential to one host (a facilitator's, a provider's): https beyond this machine, and printed
 * without what often embeds a key (user info, path, query: `https://rpc.example/v2/<key>`, `?api-key=...`).
 */

/** Whether `hostname` (as URL gives it) is this machine: localhost, 127.0.0.0/8 or ::1. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" ||
    host.endsWith(".localhost") ||
    host === "::1" ||
    /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
  );
}

/**
 * Why a URL that will be sent a credential is refused, or undefined: plain http is refused beyond loopback, since
 * whoever is on the path reads the key (and can answer in the facilitator's name).
 */
export function insecureUrlProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined; // the caller reports a malformed URL in its own words
  }
  if (url.protocol !== "http:" || isLoopbackHost(url.hostname)) return undefined;
  return `${redactedUrl(value)} is plain http on a host that is not this machine: credentials and payments would cross the network in the clear; use https (http is accepted for localhost, 127.0.0.1 and [::1] only)`;
}

/** The URL as printed: scheme, host and port; user info, path and query replaced by `…` where there were any. */
export function redactedUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "<not a URL>";
  }
  const userinfo = url.username !== "" || url.password !== "" ? "…@" : "";
  const rest = url.pathname.length > 1 || url.search !== "" || url.hash !== "" ? "/…" : "";
  return `${url.protocol}//${userinfo}${url.host}${rest}`;
}

/**
 * The service's own secrets: what signs settlements and channel vouchers, authenticates it to facilitators, opens
 * its metrics and operator's page, reaches its database and chain. A catalog route's key is sent to its provider,
 * so a route may not take its key from one of these.
 */
const OWN_SECRET_PREFIXES = ["FACILITATOR", "CDP_API_KEY", "CHANNEL_AUTHORIZER", "OPERATOR", "METRICS"];
const OWN_SECRETS = new Set(["DATABASE_URL", "CHAIN_RPC_URL", "WALLET_RPC_URL"]);

export function isServiceSecret(variable: string): boolean {
  return OWN_SECRETS.has(variable) || OWN_SECRET_PREFIXES.some((prefix) => variable.startsWith(prefix));
}
