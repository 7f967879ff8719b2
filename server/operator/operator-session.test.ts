import { describe, expect, it } from "vitest";
import { sessionCookie as cookieOf } from "../auth/session-cookie";
import { OPERATOR_SESSION, isOperatorToken, operatorSessionKey } from "./operator-session";

const OPERATOR_COOKIE = OPERATOR_SESSION.name;
const SECURE_OPERATOR_COOKIE = `__Host-${OPERATOR_COOKIE}`;
const OPERATOR_SESSION_SECONDS = OPERATOR_SESSION.seconds;
const sessionCookie = (value: string | undefined, secure: boolean) => cookieOf(OPERATOR_SESSION, value, secure);

const TOKEN = "operator-token-0123456789abcdef0123456789";

describe("the operator's session", () => {
  it("takes the token only, whatever the length of what is given", () => {
    expect(isOperatorToken(TOKEN, TOKEN)).toBe(true);
    expect(isOperatorToken(`${TOKEN}x`, TOKEN)).toBe(false);
    expect(isOperatorToken("", TOKEN)).toBe(false);
  });

  it("signs sessions with a key of the token's, never the token, another for another token", () => {
    expect(operatorSessionKey(TOKEN).toString("hex")).not.toContain(Buffer.from(TOKEN).toString("hex"));
    expect(operatorSessionKey(TOKEN).equals(operatorSessionKey(TOKEN))).toBe(true);
    expect(operatorSessionKey(TOKEN).equals(operatorSessionKey(`${TOKEN}-new`))).toBe(false);
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
