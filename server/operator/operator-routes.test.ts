import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useTestDatabases } from "../../cli/dev-stack/test-databases";
import { ClientAddressResolver } from "../http/client-address";
import type { ApiRequest } from "../http/api-request";
import { openStorage } from "../storage/open-storage";
import type { Storage } from "../storage/storage";
import { operatorRoutes, type OperatorServices } from "./operator-routes";
import { reachedOverHttps } from "../auth/session-cookie";
import { SIGN_IN_ATTEMPTS } from "../limits/sign-in-attempts";
import { SessionStore } from "../auth/session-store";

const TOKEN = "operator-routes-test-token-0123456789abcdef";
const resolver = new ClientAddressResolver({ addresses: ["10.0.0.0/8"], header: "x-forwarded-for" });
const databases = useTestDatabases();
let storage: Storage;
let services: () => OperatorServices;

beforeAll(async () => {
  storage = await openStorage(await databases.newDatabaseUrl("sqlite"));
  const sessions = new SessionStore(() => storage.sessions);
  services = () => ({ clientAddresses: resolver, sessions, limitLog: storage.limitLog, ownedKeys: storage.ownedKeys });
});
afterAll(() => storage?.close());

function request(
  peerAddress: string,
  headers: Record<string, string> = {},
  body?: string,
  path = "/operator/session",
): ApiRequest {
  const web = new Request(`http://127.0.0.1:3000${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body,
  });
  return Object.assign(web, { peerAddress });
}
const form = (token: string) => new URLSearchParams({ token }).toString();

describe("the operator's routes", () => {
  it("do not exist without OPERATOR_TOKEN", () => {
    expect(operatorRoutes({ operatorToken: undefined, publicBaseUrl: undefined }, services)).toEqual([]);
  });

  it("sign in with the token only: a 303 with the cookie, else a 401 that sets nothing", async () => {
    const [signIn, signOut] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: undefined }, services);
    const wrong = await signIn!.handle(request("10.1.2.3", { "x-forwarded-for": "192.0.2.1" }, form("nope")));
    expect(wrong.status).toBe(401);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    const right = await signIn!.handle(request("10.1.2.3", { "x-forwarded-for": "192.0.2.1" }, form(TOKEN)));
    expect(right).toMatchObject({ status: 303, headers: { location: "/operator" } });
    expect(right.headers["set-cookie"]).toMatch(
      /^paysvc_operator=operator\.\d+\.\d+\.[\w-]+; .*HttpOnly; SameSite=Strict$/,
    );
    const out = await signOut!.handle(request("10.1.2.3", {}, undefined, "/operator/sign-out"));
    expect(out.headers["set-cookie"]).toMatch(/^paysvc_operator=; Path=\/operator; Max-Age=0;/);
    const huge = await signIn!.handle(
      request("10.1.2.3", { "x-forwarded-for": "192.0.2.1" }, `token=${"x".repeat(5000)}`),
    );
    expect(huge.status).toBe(413);
  });

  it("name the cookie __Host- with Path=/ and Secure when the operator came over HTTPS", async () => {
    const [signIn, signOut] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: "https://pay.example" }, services);
    const https = { "x-forwarded-for": "192.0.2.2", origin: "https://pay.example", host: "pay.example" };
    const right = await signIn!.handle(request("10.1.2.3", https, form(TOKEN)));
    const cookie = right.headers["set-cookie"]!;
    expect(cookie).toMatch(
      /^__Host-paysvc_operator=operator\.\d+\.\d+\.[\w-]{43}; Path=\/; Max-Age=28800; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(cookie).not.toMatch(/domain=/i);
    const out = await signOut!.handle(request("10.1.2.3", https, undefined, "/operator/sign-out"));
    expect(out.headers["set-cookie"]).toBe(
      "__Host-paysvc_operator=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure",
    );
  });

  it("refuse a POST from another site's page with 403 that does nothing", async () => {
    const [signIn, signOut] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: undefined }, services);
    const generation = await storage.sessions.generation("paysvc_operator:operator");
    const otherSites: Record<string, string>[] = [
      { origin: "https://evil.example", host: "127.0.0.1:3000" },
      { origin: "null", host: "127.0.0.1:3000" },
      { "sec-fetch-site": "cross-site", host: "127.0.0.1:3000" },
      // Over HTTPS, the site's own host in plain http is another site.
      {
        origin: "http://127.0.0.1:3000",
        host: "127.0.0.1:3000",
        "x-forwarded-proto": "https",
        "x-forwarded-for": "192.0.2.9",
      },
    ];
    for (const headers of otherSites) {
      const answer = await signIn!.handle(request("10.1.2.3", headers, form(TOKEN)));
      expect(answer.status).toBe(403);
      expect(answer.headers["set-cookie"]).toBeUndefined();
      expect(answer.body).toContain("This form was sent from another site's page; nothing was done.");
      const out = await signOut!.handle(request("10.1.2.3", headers, undefined, "/operator/sign-out"));
      expect(out.status).toBe(403);
      expect(out.headers["set-cookie"]).toBeUndefined();
    }
    expect(await storage.sessions.generation("paysvc_operator:operator")).toBe(generation);
    // The page's own origin, and curl's absent one, are served.
    const own = await signIn!.handle(
      request("192.0.2.9", { origin: "http://127.0.0.1:3000", host: "127.0.0.1:3000" }, form(TOKEN)),
    );
    expect(own.status).toBe(303);
    expect((await signIn!.handle(request("192.0.2.9", {}, form(TOKEN)))).status).toBe(303);
  });

  it("sign out ends every session only for a session's holder", async () => {
    const [signIn, signOut] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: undefined }, services);
    const signedIn = await signIn!.handle(request("192.0.2.10", {}, form(TOKEN)));
    const session = signedIn.headers["set-cookie"]!.split(";")[0]!;
    const before = await storage.sessions.generation("paysvc_operator:operator");
    await signOut!.handle(request("192.0.2.10", {}, undefined, "/operator/sign-out"));
    expect(await storage.sessions.generation("paysvc_operator:operator")).toBe(before);
    const out = await signOut!.handle(request("192.0.2.10", { cookie: session }, undefined, "/operator/sign-out"));
    expect(out.status).toBe(303);
    expect(await storage.sessions.generation("paysvc_operator:operator")).toBe(before + 1);
    // The ended session ends nothing more.
    await signOut!.handle(request("192.0.2.10", { cookie: session }, undefined, "/operator/sign-out"));
    expect(await storage.sessions.generation("paysvc_operator:operator")).toBe(before + 1);
  });

  it(`admit ${SIGN_IN_ATTEMPTS} sign-in attempts per address in a window, then 429 with Retry-After, right token or not`, async () => {
    const [signIn] = operatorRoutes({ operatorToken: TOKEN, publicBaseUrl: undefined }, services);
    const from = (address: string, token: string) =>
      signIn!.handle(request("10.1.2.3", { "x-forwarded-for": address }, form(token)));
    for (let attempt = 0; attempt < SIGN_IN_ATTEMPTS; attempt++) {
      expect((await from("198.51.100.7", `guess-${attempt}`)).status).toBe(401);
    }
    const refused = await from("198.51.100.7", TOKEN);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.headers["set-cookie"]).toBeUndefined();
    expect(refused.body).toContain("Too many sign-in attempts from your address");
    expect((await from("198.51.100.8", TOKEN)).status).toBe(303);
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
