import type { ApiRequest } from "../http/api-request";
import { bearerToken } from "../http/bearer-token";
import type { KeyPrincipal } from "./principal";

/** Every prepaid code starts with this, so it is recognisable in a config file or a leaked log. */
export const PREPAID_CODE_PREFIX = "paysvc_pk_";

/**
 * Where an API carries a prepaid key, in the order looked at: OpenAI's APIs the bearer; Anthropic's Messages its
 * `x-api-key` (the official SDK's `apiKey`), else the bearer (its `authToken`, Claude Code's ANTHROPIC_AUTH_TOKEN).
 */
export type KeyCarriers = readonly ("x-api-key" | "bearer")[];

export const BEARER: KeyCarriers = ["bearer"];

/**
 * The prepaid key a request presents where its API carries one, as its principal; none for a request to be paid
 * otherwise. A value that is not a prepaid code is not an error: the official SDKs always send one (x402 payers
 * configure a placeholder such as "x402").
 */
export function keyPrincipal(request: ApiRequest, carriers: KeyCarriers = BEARER): KeyPrincipal | undefined {
  for (const carrier of carriers) {
    const value = carrier === "bearer" ? bearerToken(request) : request.headers.get(carrier)?.trim();
    if (value?.startsWith(PREPAID_CODE_PREFIX)) return { kind: "key", code: value };
  }
  return undefined;
}
