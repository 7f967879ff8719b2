import { describe, expect, it } from "vitest";
import {
  OPERATOR_COOKIE,
  OPERATOR_SESSION_SECONDS,
  hasOperatorSession,
  isOperatorToken,
  newSessionValue,
  sessionCookie,
} from "./operator-session";

const TOKEN = "operator-token-0123456789abcdef0123456789";
const cookie = (value: string) => `other=1; ${OPERATOR_COOKIE}=${value}; last=2`;

describe("the operator's session", () => {
  it("takes the token only, whatever the length of what is given", () => {
    expect(isOperatorToken(TOKEN, TOKEN)).toBe(true);
    expect(isOperatorToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(isOperatorToken("", TOKEN)).toBe(false);
  });

  it("is a signed expiry, never the token, valid until it expires and only under the token that signed it", () => {
    const now = Date.UTC(2026, 10, 27, 1, 0, 0);
    const value = newSessionValue(TOKEN, now);
    expect(value).not.toContain(TOKEN);
    expect(value.split(".")[0]).toBe(String(now / 1000 + OPERATOR_SESSION_SECONDS));
    expect(hasOperatorSession(cookie(value), TOKEN, now)).toBe(true);
    expect(hasOperatorSession(cookie(value), TOKEN, now + OPERATOR_SESSION_SECONDS * 1000)).toBe(false);
    expect(hasOperatorSession(cookie(value), `${TOKEN}-new`, now)).toBe(false);
    expect(hasOperatorSession(undefined, TOKEN, now)).toBe(false);
    expect(hasOperatorSession(cookie(TOKEN), TOKEN, now)).toBe(false);
  });

  it("refuses an expiry moved later, the signature kept", () => {
    const now = Date.now();
    const [expires, signed] = newSessionValue(TOKEN, now).split(".");
    expect(hasOperatorSession(cookie(`${Number(expires) + 3600}.${signed}`), TOKEN, now)).toBe(false);
  });

  it("is HttpOnly, SameSite=Strict, sent to /operator only, Secure over HTTPS; ending it clears it", () => {
    expect(sessionCookie("v", false)).toBe(
      `${OPERATOR_COOKIE}=v; Path=/operator; Max-Age=${OPERATOR_SESSION_SECONDS}; HttpOnly; SameSite=Strict`,
    );
    expect(sessionCookie("v", true)).toMatch(/; Secure$/);
    expect(sessionCookie(undefined, true)).toBe(
      `${OPERATOR_COOKIE}=; Path=/operator; Max-Age=0; HttpOnly; SameSite=Strict; Secure`,
    );
  });
});
