import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/**
 * The operator's session cookie: over HTTPS `__Host-paysvc_operator` (the browser then takes it only from a secure
 * origin, for this host alone, Path=/: no sibling subdomain and no plain-HTTP page can set or shadow it), else
 * `paysvc_operator` on /operator. How long a sign-in lasts.
 */
export const OPERATOR_COOKIE = "paysvc_operator";
export const SECURE_OPERATOR_COOKIE = `__Host-${OPERATOR_COOKIE}`;
export const OPERATOR_SESSION_SECONDS = 8 * 3600;

/** Whether `given` is the operator's token, compared in constant time (both hashed to one length first). */
export function isOperatorToken(given: string, token: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * The key sessions are signed with, derived from the token: the cookie never holds the token, and a new token ends
 * every session signed with the old one.
 */
function sessionKey(token: string): Buffer {
  return createHmac("sha256", token).update("paysvc operator session v2").digest();
}

function signature(token: string, generation: number, expires: number): string {
  return createHmac("sha256", sessionKey(token))
    .update(`operator-session:${generation}:${expires}`)
    .digest("base64url");
}

/**
 * A new session's cookie value: the session generation it is signed in (operator-store.ts), its expiry (Unix
 * seconds), and an HMAC of both under the token's key.
 */
export function newSessionValue(token: string, generation: number, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + OPERATOR_SESSION_SECONDS;
  return `${generation}.${expires}.${signature(token, generation, expires)}`;
}

/**
 * Whether the Cookie header carries an unexpired session signed under this token in the current generation: one
 * signed before the last sign-out, on any instance, is over.
 */
export function hasOperatorSession(
  cookieHeader: string | null | undefined,
  token: string,
  generation: number,
  now = Date.now(),
): boolean {
  const match = /^(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(sessionValue(cookieHeader) ?? "");
  if (!match) return false;
  const [signedIn, expires] = [Number(match[1]), Number(match[2])];
  if (signedIn !== generation || expires * 1000 <= now) return false;
  const expected = Buffer.from(signature(token, signedIn, expires));
  const given = Buffer.from(match[3]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The session cookie's value in a Cookie header: the `__Host-` one when there is one. The plain one is read too
 * (the page cannot tell how its visitor reached it): whichever is read must carry a signature only the token makes.
 */
export function sessionValue(cookieHeader: string | null | undefined): string | undefined {
  return cookieValue(cookieHeader, SECURE_OPERATOR_COOKIE) ?? cookieValue(cookieHeader, OPERATOR_COOKIE);
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
 * The Set-Cookie of a session (a value and its lifetime) or of its end (none, Max-Age=0): HttpOnly, SameSite=Strict.
 * Over HTTPS `__Host-` prefixed, Secure, Path=/ and no Domain, as the prefix requires; else sent to /operator only.
 */
export function sessionCookie(value: string | undefined, secure: boolean): string {
  return [
    `${secure ? SECURE_OPERATOR_COOKIE : OPERATOR_COOKIE}=${value ?? ""}`,
    secure ? "Path=/" : "Path=/operator",
    `Max-Age=${value === undefined ? 0 : OPERATOR_SESSION_SECONDS}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}
