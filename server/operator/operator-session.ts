import { createHash, createHmac, timingSafeEqual } from "node:crypto";

/** The operator's session cookie: its name, and how long a sign-in lasts. */
export const OPERATOR_COOKIE = "paysvc_operator";
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
  return createHmac("sha256", token).update("paysvc operator session v1").digest();
}

function signature(token: string, expires: number): string {
  return createHmac("sha256", sessionKey(token)).update(`operator-session:${expires}`).digest("base64url");
}

/** A new session's cookie value: its expiry (Unix seconds) and an HMAC of it under the token's key. */
export function newSessionValue(token: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000) + OPERATOR_SESSION_SECONDS;
  return `${expires}.${signature(token, expires)}`;
}

/** Whether the Cookie header carries an unexpired session signed under this token. */
export function hasOperatorSession(cookieHeader: string | null | undefined, token: string, now = Date.now()): boolean {
  const value = cookieValue(cookieHeader, OPERATOR_COOKIE);
  const match = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(value ?? "");
  if (!match) return false;
  const expires = Number(match[1]);
  if (expires * 1000 <= now) return false;
  const expected = Buffer.from(signature(token, expires));
  const given = Buffer.from(match[2]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
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
 * The Set-Cookie of a session (a value and its lifetime) or of its end (none, Max-Age=0): HttpOnly, SameSite=Strict,
 * sent only to the operator's paths, Secure when the operator reached us over HTTPS.
 */
export function sessionCookie(value: string | undefined, secure: boolean): string {
  return [
    `${OPERATOR_COOKIE}=${value ?? ""}`,
    "Path=/operator",
    `Max-Age=${value === undefined ? 0 : OPERATOR_SESSION_SECONDS}`,
    "HttpOnly",
    "SameSite=Strict",
    ...(secure ? ["Secure"] : []),
  ].join("; ");
}
