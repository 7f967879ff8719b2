import { describe, expect, it } from "vitest";
import { ClientAddressResolver } from "../free-tier/client-address";
import type { ApiRequest } from "../http/api-request";
import { operatorRoutes, reachedOverHttps } from "./operator-routes";

const TOKEN = "operator-routes-test-token-0123456789abcdef";
const resolver = new ClientAddressResolver({ addresses: ["10.0.0.0/8"], header: "x-forwarded-for" });

function request(peerAddress: string, headers: Record<string, string> = {}, body?: string): ApiRequest {
  const web = new Request("http://127.0.0.1:3000/operator/session", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
  return Object.assign(web, { peerAddress });
}

describe("the operator's routes", () => {
  it("do not exist without OPERATOR_TOKEN", () => {
    expect(operatorRoutes({ operatorToken: undefined, publicBaseUrl: undefined }, () => resolver)).toEqual([]);
  });

  it("sign in with the token only: a 303 with the cookie, else a 401 that sets nothing", async () => {
    const [signIn, signOut] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: undefined }, () => resolver);
    const wrong = await signIn!.handle(request("10.1.2.3", {}, new URLSearchParams({ token: "nope" }).toString()));
    expect(wrong.status).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const right = await signIn!.handle(request("10.1.2.3", {}, new URLSearchParams({ token: TOKEN }).toString()));
    expect(right).toMatchObject({ status: 303, headers: { location: "/operator" } });
    expect(right.headers["set-cookie"]).toMatch(/^paysvc_operator=\d+\.[\w-]+; .*HttpOnly; SameSite=Strict$/);
    const out = await signOut!.handle(request("10.1.2.3"));
    expect(out.headers["set-cookie"]).toMatch(/^paysvc_operator=; Path=\/operator; Max-Age=0;/);
    const huge = await signIn!.handle(request("10.1.2.3", {}, `token=${"x".repeat(5000)}`));
    expect(huge.status).toBe(413);
  });

  it("believe a forwarded https only from a trusted proxy, or PUBLIC_BASE_URL", () => {
    const https = { "x-forwarded-proto": "https" };
    expect(reachedOverHttps(undefined, request("10.1.2.3", https), resolver)).toBe(true);
    expect(reachedOverHttps(undefined, request("10.1.2.3", { forwarded: "for=1.2.3.4;proto=https" }), resolver)).toBe(
      true,
    );
    expect(reachedOverHttps(undefined, request("10.1.2.3"), resolver)).toBe(false);
    expect(reachedOverHttps(undefined, request("192.0.2.7", https), resolver)).toBe(false);
    expect(reachedOverHttps("https://pay.example", request("192.0.2.7"), resolver)).toBe(true);
  });
});
