import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import type { SessionKind } from "../auth/session-cookie";
import type { SessionStore } from "../auth/session-store";

/**
 * The operator's session, one kind of the browser sessions (auth/session-store.ts): `__Host-paysvc_operator` over
 * HTTPS, else on /operator; 8 h; its one subject is "operator".
 */
export const OPERATOR_SESSION: SessionKind = { name: "paysvc_operator", plainPath: "/operator", seconds: 8 * 3600 };
const OPERATOR = "operator";

/** Whether `given` is the operator's token, compared in constant time (both hashed to one length first). */
export function isOperatorToken(given: string, token: string): boolean {
  const digest = (value: string) => createHash("sha256").update(value, "utf8").digest();
  return timingSafeEqual(digest(given), digest(token));
}

/**
 * The key the operator's sessions are signed with, derived from the token: the cookie never holds the token, and a
 * new token ends every session signed with the old one.
 */
export function operatorSessionKey(token: string): Buffer {
  return createHmac("sha256", token).update("paysvc operator session v3").digest();
}

/** The operator's sessions in the deployment's session store, signed under its token's key: the page's and the routes'. */
export function operatorSessions(sessions: SessionStore, token: string) {
  const key = operatorSessionKey(token);
  return {
    open: () => sessions.open(OPERATOR_SESSION, key, OPERATOR),
    /** Whether the Cookie header carries a live session (its generation read each time: a sign-out anywhere ends it). */
    signedIn: async (cookieHeader: string | null) =>
      (await sessions.read(OPERATOR_SESSION, key, cookieHeader)) !== undefined,
    /** Ends every session, for a live session's holder only. */
    end: (cookieHeader: string | null) => sessions.end(OPERATOR_SESSION, key, cookieHeader),
  };
}
