import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { sessionValue, type SessionKind } from "../auth/session-cookie";

/** The operator's session (auth/session-cookie.ts): `__Host-paysvc_operator` over HTTPS, else on /operator; 8 h. */
export const OPERATOR_SESSION: SessionKind = { name: "paysvc_operator", plainPath: "/operator", seconds: 8 * 3600 };

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
  const expires = Math.floor(now / 1000) + OPERATOR_SESSION.seconds;
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
  const match = /^(\d{1,15})\.(\d{1,12})\.([A-Za-z0-9_-]{43})$/.exec(
    sessionValue(cookieHeader, OPERATOR_SESSION) ?? "",
  );
  if (!match) return false;
  const [signedIn, expires] = [Number(match[1]), Number(match[2])];
  if (signedIn !== generation || expires * 1000 <= now) return false;
  const expected = Buffer.from(signature(token, signedIn, expires));
  const given = Buffer.from(match[3]!);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
