import type { ServiceConfig } from "../../config/service-config";
import type { ClientAddressResolver } from "../free-tier/client-address";
import { textAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { readBodyBytes } from "../http/read-body-bytes";
import type { HttpRoute } from "../http/router";
import { isOperatorToken, newSessionValue, sessionCookie } from "./operator-session";

/** A sign-in form is one short field: anything longer is refused unread. */
const MAX_FORM_BYTES = 4096;

/**
 * The operator's sign-in and sign-out (the page itself, /operator, is the console's): POST /operator/session with
 * the form field `token` sets the session cookie and sends the browser back to the page; a wrong token is a 401
 * with one sentence, nothing set. POST /operator/sign-out clears the cookie. No OPERATOR_TOKEN: no routes (404).
 */
export function operatorRoutes(
  config: Pick<ServiceConfig, "operatorToken" | "publicBaseUrl">,
  clientAddresses: () => ClientAddressResolver,
): HttpRoute[] {
  const token = config.operatorToken;
  if (!token) return [];
  const secure = (request: ApiRequest) => reachedOverHttps(config.publicBaseUrl, request, clientAddresses());
  return [
    {
      method: "POST",
      path: "/operator/session",
      handle: async (request) => {
        const form = await readForm(request);
        if (form === undefined) return page(413, "The sign-in form is larger than a token; nothing was set.");
        if (!isOperatorToken(form.get("token") ?? "", token)) {
          return page(401, "That is not the operator's token; nothing was set.");
        }
        return backToPage(sessionCookie(newSessionValue(token), secure(request)));
      },
    },
    {
      method: "POST",
      path: "/operator/sign-out",
      handle: async (request) => backToPage(sessionCookie(undefined, secure(request))),
    },
  ];
}

/**
 * Whether the operator reached us over HTTPS: PUBLIC_BASE_URL says so, or a trusted proxy (TRUSTED_PROXIES) says
 * in X-Forwarded-Proto or Forwarded that its client used https. Anyone else's say is ignored.
 */
export function reachedOverHttps(
  publicBaseUrl: string | undefined,
  request: ApiRequest,
  clientAddresses: ClientAddressResolver,
): boolean {
  if (publicBaseUrl?.startsWith("https://") || new URL(request.url).protocol === "https:") return true;
  if (!clientAddresses.fromTrustedProxy(request)) return false;
  const forwardedProto = request.headers.get("x-forwarded-proto")?.split(",")[0]?.trim().toLowerCase();
  const forwarded = /(?:^|[;,\s])proto=("?)https\1(?:[;,\s]|$)/i.test(request.headers.get("forwarded") ?? "");
  return forwardedProto === "https" || forwarded;
}

function backToPage(cookie: string): ApiAnswer {
  return {
    status: 303,
    headers: { location: "/operator", "set-cookie": cookie, "cache-control": "no-store" },
    body: "",
  };
}

/** A short HTML page of one sentence, with the way back to the sign-in form. */
function page(status: number, sentence: string): ApiAnswer {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>paysvc operator</title></head><body><main><h1>Operator</h1><p role="alert">${sentence}</p><p><a href="/operator">Sign in again</a></p></main></body></html>`;
  return textAnswer(html, "text/html; charset=utf-8", { status, headers: { "cache-control": "no-store" } });
}

/** The urlencoded form of a request, or undefined when it is larger than a sign-in form can be. */
async function readForm(request: ApiRequest): Promise<URLSearchParams | undefined> {
  const bytes = await readBodyBytes(request, MAX_FORM_BYTES);
  return bytes && new URLSearchParams(bytes.toString("utf8"));
}
