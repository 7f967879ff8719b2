import { describe, expect, it } from "vitest";
import { sessionCookie as cookieOf } from "../auth/session-cookie";
import { OPERATOR_SESSION, hasOperatorSession, isOperatorToken, newSessionValue } from "./operator-session";

const OPERATOR_COOKIE = OPERATOR_SESSION.name;
const SECURE_OPERATOR_COOKIE = `__Host-${OPERATOR_COOKIE}`;
const OPERATOR_SESSION_SECONDS = OPERATOR_SESSION.seconds;
const sessionCookie = (value: string | undefined, secure: boolean) => cookieOf(OPERATOR_SESSION, value, secure);

const TOKEN = "operator-token-0123456789abcdef0123456789";
const cookie = (value: string, name = OPERATOR_COOKIE) => `other=1; ${name}=${value}; last=2`;

describe("the operator's session", () => {
  it("takes the token only, whatever the length of what is given", () => {
    expect(isOperatorToken(TOKEN, TOKEN)).toBe(true);
    expect(isOperatorToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(isOperatorToken("", TOKEN)).toBe(false);
  });

  it("is a signed generation and expiry, never the token, valid until it expires and only under the token that signed it", () => {
    const now = Date.UTC(2026, 10, 27, 1, 0, 0);
    const value = newSessionValue(TOKEN, 3, now);
    expect(value).not.toContain(TOKEN);
    expect(value.split(".").slice(0, 2)).toEqual(["3", String(now / 1000 + OPERATOR_SESSION_SECONDS)]);
    expect(hasOperatorSession(cookie(value), TOKEN, 3, now)).toBe(true);
    expect(hasOperatorSession(cookie(value, SECURE_OPERATOR_COOKIE), TOKEN, 3, now)).toBe(true);
    expect(hasOperatorSession(cookie(value), TOKEN, 3, now + OPERATOR_SESSION_SECONDS * 1000)).toBe(false);
    expect(hasOperatorSession(cookie(value), `${TOKEN}-new`, 3, now)).toBe(false);
    expect(hasOperatorSession(undefined, TOKEN, 3, now)).toBe(false);
    expect(hasOperatorSession(cookie(TOKEN), TOKEN, 3, now)).toBe(false);
  });

  it("ends when the generation moves on (a sign-out), and cannot be carried into the new one", () => {
    const now = Date.now();
    const value = newSessionValue(TOKEN, 3, now);
    expect(hasOperatorSession(cookie(value), TOKEN, 4, now)).toBe(false);
    const [, expires, signed] = value.split(".");
    expect(hasOperatorSession(cookie(`4.${expires}.${signed}`), TOKEN, 4, now)).toBe(false);
  });

  it("refuses an expiry moved later, the signature kept", () => {
    const now = Date.now();
    const [generation, expires, signed] = newSessionValue(TOKEN, 0, now).split(".");
    expect(hasOperatorSession(cookie(`${generation}.${Number(expires) + 3600}.${signed}`), TOKEN, 0, now)).toBe(false);
  });

  it("reads the __Host- cookie first when both are sent", () => {
    const now = Date.now();
    const header = `${OPERATOR_COOKIE}=${newSessionValue(TOKEN, 1, now)}; ${SECURE_OPERATOR_COOKIE}=stale`;
    expect(hasOperatorSession(header, TOKEN, 1, now)).toBe(false);
  });

  it("is HttpOnly, SameSite=Strict, sent to /operator only over HTTP; ending it clears it", () => {
    expect(sessionCookie("v", false)).toBe(
      `${OPERATOR_COOKIE}=v; Path=/operator; Max-Age=${OPERATOR_SESSION_SECONDS}; HttpOnly; SameSite=Strict`,
    );
    expect(sessionCookie(undefined, false)).toBe(
      `${OPERATOR_COOKIE}=; Path=/operator; Max-Age=0; HttpOnly; SameSite=Strict`,
    );
  });

  it("over HTTPS is named __Host-, Secure, Path=/ and without Domain, as the prefix requires", () => {
    expect(SECURE_OPERATOR_COOKIE).toBe("__Host-paysvc_operator");
    expect(sessionCookie("v", true)).toBe(
      `__Host-paysvc_operator=v; Path=/; Max-Age=${OPERATOR_SESSION_SECONDS}; HttpOnly; SameSite=Strict; Secure`,
    );
    expect(sessionCookie(undefined, true)).toBe(
      "__Host-paysvc_operator=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure",
    );
  });
});
