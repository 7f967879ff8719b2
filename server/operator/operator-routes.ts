import type { ServiceConfig } from "../../config/service-config";
import type { ClientAddressResolver } from "../http/client-address";
import { textAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { readBodyBytes } from "../http/read-body-bytes";
import type { HttpRoute } from "../http/router";
import { fromThisSite } from "../auth/form-origin";
import type { SessionStore } from "../auth/session-store";
import type { LimitLog } from "../limits/limit-log";
import type { OwnedKeyStore } from "../prepaid/owned-keys";
import { isOperatorToken, OPERATOR_SESSION, operatorSessions } from "./operator-session";
import { reachedOverHttps, sessionCookie } from "../auth/session-cookie";
import { SignInAttempts } from "../limits/sign-in-attempts";

/** A sign-in form is one short field: anything longer is refused unread. */
const MAX_FORM_BYTES = 4096;

/** What the routes work with, once the app has started: who a request comes from, the sessions, limits and keys. */
export interface OperatorServices {
  clientAddresses: ClientAddressResolver;
  sessions: SessionStore;
  limitLog: LimitLog;
  ownedKeys: OwnedKeyStore;
}

/**
 * The operator's sign-in and sign-out (the page itself, /operator, is the console's): POST /operator/session with
 * the form field `token` sets the session cookie and sends the browser back to the page; a wrong token is a 401
 * with one sentence, nothing set; past the attempts of its address's window, a 429 with Retry-After. POST
 * /operator/sign-out ends every session (the generation moves on) when it carries one, and clears the cookie.
 * POST /operator/keys/revoke (field `key`, a signed-in operator's) revokes a key and goes back to the page, where
 * the keys' card shows it. Any POST from another site's page is a 403 that does nothing. No OPERATOR_TOKEN: no routes (404).
 */
export function operatorRoutes(
  config: Pick<ServiceConfig, "operatorToken" | "publicBaseUrl">,
  services: () => OperatorServices,
): HttpRoute[] {
  const token = config.operatorToken;
  if (!token) return [];
  const secure = (request: ApiRequest) => reachedOverHttps(config.publicBaseUrl, request, services().clientAddresses);
  const attempts = new SignInAttempts(() => services().limitLog);
  const sessions = () => operatorSessions(services().sessions, token);
  const otherSite = (request: ApiRequest) => !fromThisSite(request, config.publicBaseUrl, secure(request));
  const refused = () => page(403, "This form was sent from another site's page; nothing was done.");
  return [
    {
      method: "POST",
      path: "/operator/session",
      handle: async (request) => {
        if (otherSite(request)) return refused();
        const verdict = await attempts.attempt(services().clientAddresses.resolve(request));
        if (!verdict.admitted) {
          const wait = verdict.retryAfterSeconds;
          const sentence = `Too many sign-in attempts from your address; try again in ${wait} seconds. Nothing was set.`;
          return page(429, sentence, { "retry-after": String(wait) });
        }
        const form = await readForm(request);
        if (form === undefined) return page(413, "The sign-in form is larger than a token; nothing was set.");
        if (!isOperatorToken(form.get("token") ?? "", token)) {
          return page(401, "That is not the operator's token; nothing was set.");
        }
        const session = await sessions().open();
        return backToPage(sessionCookie(OPERATOR_SESSION, session.value, secure(request)));
      },
    },
    {
      method: "POST",
      path: "/operator/sign-out",
      handle: async (request) => {
        if (otherSite(request)) return refused();
        // Only a session's holder ends the sessions: a sign-out without one (anyone's curl) changes nothing.
        await sessions().end(request.headers.get("cookie"));
        return backToPage(sessionCookie(OPERATOR_SESSION, undefined, secure(request)));
      },
    },
    {
      method: "POST",
      path: "/operator/keys/revoke",
      handle: async (request) => {
        if (otherSite(request)) return refused();
        if (!(await sessions().signedIn(request.headers.get("cookie")))) {
          return page(401, "Your operator session has ended; nothing was revoked.");
        }
        const form = await readForm(request);
        const key = Number(form?.get("key"));
        if (!Number.isSafeInteger(key) || key < 1) return page(400, "Name the key to revoke by its id.");
        const revoked = await services().ownedKeys.revoke(key, undefined);
        const back = `/operator?key=${key}&revoked=${revoked ? "1" : "0"}#keys`;
        return { status: 303, headers: { location: back, "cache-control": "no-store" }, body: "" };
      },
    },
  ];
}

function backToPage(cookie: string): ApiAnswer {
  return {
    status: 303,
    headers: { location: "/operator", "set-cookie": cookie, "cache-control": "no-store" },
    body: "",
  };
}

/** A short HTML page of one sentence, with the way back to the sign-in form. */
function page(status: number, sentence: string, headers: Record<string, string> = {}): ApiAnswer {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>paysvc operator</title></head><body><main><h1>Operator</h1><p role="alert">${sentence}</p><p><a href="/operator">Sign in again</a></p></main></body></html>`;
  return textAnswer(html, "text/html; charset=utf-8", { status, headers: { "cache-control": "no-store", ...headers } });
}

/** The urlencoded form of a request, or undefined when it is larger than a sign-in form can be. */
async function readForm(request: ApiRequest): Promise<URLSearchParams | undefined> {
  const bytes = await readBodyBytes(request, MAX_FORM_BYTES);
  return bytes && new URLSearchParams(bytes.toString("utf8"));
}
