import { generateJwt } from "@coinbase/cdp-sdk/auth";
import type { FacilitatorConfig } from "@x402/core/server";
import type { FacilitatorAuth } from "../../config/facilitators";

type AuthHeaders = NonNullable<FacilitatorConfig["createAuthHeaders"]>;

/** The facilitator operations and how each is asked: what a CDP JWT's `uris` claim names. */
const OPERATIONS = [
  { operation: "verify", method: "POST" },
  { operation: "settle", method: "POST" },
  { operation: "supported", method: "GET" },
] as const;

/**
 * `createAuthHeaders` for a facilitator at `url` (called by HTTPFacilitatorClient before every request; it answers
 * per operation): nothing; a fixed header; or, for CDP, a JWT per operation signed with the API key by the CDP SDK
 * (valid 120 s, naming the request's method, host and path), made anew for each request.
 */
export function facilitatorAuthHeaders(url: string, auth: FacilitatorAuth): AuthHeaders | undefined {
  if (auth.kind === "none") return undefined;
  if (auth.kind === "header") {
    const headers = { [auth.name]: auth.value };
    return async () => ({ verify: headers, settle: headers, supported: headers });
  }
  const { host, pathname } = new URL(url);
  const base = pathname.replace(/\/+$/, "");
  return async () => {
    const tokens = await Promise.all(
      OPERATIONS.map(({ operation, method }) =>
        generateJwt({
          apiKeyId: auth.apiKeyId,
          apiKeySecret: auth.apiKeySecret,
          requestMethod: method,
          requestHost: host,
          requestPath: `${base}/${operation}`,
        }),
      ),
    );
    const [verify, settle, supported] = tokens.map((token) => ({ Authorization: `Bearer ${token}` }));
    return { verify, settle, supported };
  };
}
