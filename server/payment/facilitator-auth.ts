import { generateJwt } from "@coinbase/cdp-sdk/auth";
import { HTTPFacilitatorClient, type FacilitatorConfig } from "@x402/core/server";
import type { FacilitatorAuth } from "../../config/facilitators";

/** How each facilitator operation is asked: what a CDP JWT's `uris` claim names. */
const METHODS: Record<string, "GET" | "POST"> = { verify: "POST", settle: "POST", supported: "GET", bazaar: "GET" };

/**
 * The official HTTP facilitator client, sending a facilitator's credentials with every request: nothing; a fixed
 * header; or, for CDP, a JWT signed with the API key by the CDP SDK (valid 120 s, naming the request's method, host
 * and path), made anew for each request and only for the operation asked (the client's `createAuthHeaders` hook
 * would make one for every operation on each call: three signatures where one is used).
 */
export class AuthenticatedFacilitatorClient extends HTTPFacilitatorClient {
  private readonly host: string;
  private readonly basePath: string;

  constructor(
    config: Omit<FacilitatorConfig, "createAuthHeaders"> & { url: string },
    private readonly auth: FacilitatorAuth,
  ) {
    // The hook's presence is what makes the client ask `createAuthHeaders(path)`, overridden below.
    super({ ...config, createAuthHeaders: auth.kind === "none" ? undefined : async () => ({}) });
    const { host, pathname } = new URL(config.url);
    this.host = host;
    this.basePath = pathname.replace(/\/+$/, "");
  }

  override async createAuthHeaders(path: string): Promise<{ headers: Record<string, string> }> {
    const { auth } = this;
    if (auth.kind === "none") return { headers: {} };
    if (auth.kind === "header") return { headers: { [auth.name]: auth.value } };
    const token = await generateJwt({
      apiKeyId: auth.apiKeyId,
      apiKeySecret: auth.apiKeySecret,
      requestMethod: METHODS[path] ?? "POST",
      requestHost: this.host,
      requestPath: `${this.basePath}/${path}`,
    });
    return { headers: { Authorization: `Bearer ${token}` } };
  }
}
