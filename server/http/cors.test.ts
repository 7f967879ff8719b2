import { describe, expect, it } from "vitest";
import type { CorsOrigins } from "../../config/cors-origins";
import { eventStreamAnswer, jsonAnswer, type ApiAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";
import { ALLOWED_HEADERS, CorsPolicy, EXPOSED_HEADERS } from "./cors";
import { Router, type HttpRoute } from "./router";

const PAGE = "https://app.example";

function requestOf(method: string, path: string, headers: Record<string, string> = {}): ApiRequest {
  const lower = new Map(Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value]));
  return {
    method,
    url: `http://127.0.0.1:3000${path}`,
    headers: { get: (name) => lower.get(name) ?? null },
    body: null,
  };
}

const preflight = (path: string, origin = PAGE) =>
  requestOf("OPTIONS", path, {
    origin,
    "access-control-request-method": "POST",
    "access-control-request-headers": "content-type,payment-signature,x-custom",
  });

const corsHeaderNames = (answer: ApiAnswer) => Object.keys(answer.headers).filter((name) => name.startsWith("access-"));

describe("CorsPolicy with * (the default)", () => {
  const policy = new CorsPolicy("*");

  it("gives every answer the same headers, Origin or not, so caches need no Vary", () => {
    for (const origin of [PAGE, null]) {
      const answer = policy.apply(jsonAnswer({}, { headers: { "Cache-Control": "no-store" } }), origin);
      expect(answer.headers).toEqual({
        "content-type": "application/json",
        "cache-control": "no-store",
        "access-control-allow-origin": "*",
        "access-control-expose-headers": EXPOSED_HEADERS,
      });
    }
  });

  it("replaces a narrower expose list set by the handler", () => {
    const answer = jsonAnswer({}, { headers: { "Access-Control-Expose-Headers": "PAYMENT-REQUIRED" } });
    expect(policy.apply(answer, PAGE).headers["access-control-expose-headers"]).toBe(EXPOSED_HEADERS);
  });

  it("answers a preflight with the path's methods, a fixed header list and a max age", () => {
    const answer = policy.options(preflight("/v1/chat/completions"), "POST, OPTIONS");
    expect(answer).toEqual({
      status: 204,
      body: "",
      headers: {
        allow: "POST, OPTIONS",
        "access-control-allow-origin": "*",
        "access-control-allow-methods": "POST, OPTIONS",
        "access-control-allow-headers": ALLOWED_HEADERS,
        "access-control-max-age": "86400",
        "access-control-expose-headers": EXPOSED_HEADERS,
      },
    });
    // What the browser asked for is not echoed.
    expect(answer.headers["access-control-allow-headers"]).not.toContain("x-custom");
    expect(ALLOWED_HEADERS).toBe(
      "Content-Type, Authorization, PAYMENT-SIGNATURE, X-PAYMENT, SIGN-IN-WITH-X, Access-Control-Expose-Headers, X-Api-Key, Anthropic-Version, Anthropic-Beta",
    );
  });

  it("answers an OPTIONS that is no preflight as before: 204 with Allow", () => {
    for (const request of [requestOf("OPTIONS", "/health"), requestOf("OPTIONS", "/health", { origin: PAGE })]) {
      const answer = policy.options(request, "GET, HEAD, OPTIONS");
      expect(answer.status).toBe(204);
      expect(answer.headers.allow).toBe("GET, HEAD, OPTIONS");
      expect(answer.headers["access-control-allow-methods"]).toBeUndefined();
      expect(answer.headers["access-control-max-age"]).toBeUndefined();
    }
  });
});

describe("CorsPolicy with a list of origins", () => {
  const policy = new CorsPolicy([PAGE, "http://localhost:5173"]);

  it("echoes an allowed Origin and adds Vary: Origin to what the answer already varies on", () => {
    const answer = policy.apply(jsonAnswer({}, { headers: { Vary: "Host" } }), "http://localhost:5173");
    expect(answer.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    expect(answer.headers["access-control-expose-headers"]).toBe(EXPOSED_HEADERS);
    expect(answer.headers.vary).toBe("Host, Origin");
  });

  it("gives another Origin, or none, no CORS headers, but still Vary: Origin", () => {
    for (const origin of ["https://evil.example", "null", null]) {
      const answer = policy.apply(jsonAnswer({}), origin);
      expect(corsHeaderNames(answer)).toEqual([]);
      expect(answer.headers.vary).toBe("Origin");
    }
  });

  it("answers a preflight of another origin without CORS headers", () => {
    const refused = policy.options(preflight("/v1/chat/completions", "https://evil.example"), "POST, OPTIONS");
    expect(refused).toEqual({ status: 204, body: "", headers: { allow: "POST, OPTIONS", vary: "Origin" } });
    const allowed = policy.options(preflight("/v1/chat/completions"), "POST, OPTIONS");
    expect(allowed.headers).toMatchObject({
      "access-control-allow-origin": PAGE,
      "access-control-allow-methods": "POST, OPTIONS",
      vary: "Origin",
    });
  });
});

describe("the router's answers", () => {
  let origins: CorsOrigins = "*";
  const route = (method: "GET" | "POST", path: string, handle: (request: ApiRequest) => ApiAnswer): HttpRoute => ({
    method,
    path,
    handle: async (request) => handle(request),
  });
  const router = new Router(
    [
      route("GET", "/thing", () => jsonAnswer({ ok: true })),
      route("POST", "/thing", () => {
        throw new Error("boom");
      }),
      route("POST", "/stream", () => eventStreamAnswer(new ReadableStream(), {})),
    ],
    () => origins,
  );
  const answer = (request: ApiRequest) => router.answer(request.method, new URL(request.url).pathname)(request);

  it("carries CORS on successes, failures, streams, 404s and 405s", async () => {
    origins = "*";
    const withOrigin = { origin: PAGE };
    for (const [method, path, status] of [
      ["GET", "/thing", 200],
      ["HEAD", "/thing", 200],
      ["POST", "/thing", 500],
      ["POST", "/stream", 200],
      ["DELETE", "/thing", 405],
      ["GET", "/nothing", 404],
    ] as const) {
      const reply = await answer(requestOf(method, path, withOrigin));
      expect([reply.status, reply.headers["access-control-allow-origin"]], `${method} ${path}`).toEqual([status, "*"]);
      expect(reply.headers["access-control-expose-headers"]).toBe(EXPOSED_HEADERS);
    }
  });

  it("answers a preflight with the path's methods plus OPTIONS, and follows the configuration", async () => {
    origins = "*";
    const first = await answer(preflight("/thing"));
    expect(first.headers["access-control-allow-methods"]).toBe("GET, HEAD, POST, OPTIONS");
    expect(first.headers["access-control-allow-origin"]).toBe("*");
    origins = ["http://localhost:5173"];
    const refused = await answer(preflight("/thing"));
    expect(corsHeaderNames(refused)).toEqual([]);
    const allowed = await answer(preflight("/thing", "http://localhost:5173"));
    expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:5173");
    const plain = await answer(requestOf("GET", "/thing", { origin: "http://localhost:5173" }));
    expect(plain.headers).toMatchObject({ "access-control-allow-origin": "http://localhost:5173", vary: "Origin" });
  });
});
