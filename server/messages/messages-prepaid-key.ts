import type { ApiRequest } from "../http/api-request";
import { PREPAID_CODE_PREFIX, prepaidCodeFor } from "../prepaid/prepaid-code";

/**
 * The prepaid key of a Messages call: in `x-api-key` (the official SDK's `apiKey`) or as the bearer (its
 * `authToken`, Claude Code's ANTHROPIC_AUTH_TOKEN). Any other value is no key: the SDK needs one set, so an x402
 * payer sets a placeholder, and the call goes to x402.
 */
export function messagesPrepaidKey(request: ApiRequest): string | undefined {
  const apiKey = request.headers.get("x-api-key")?.trim();
  if (apiKey?.startsWith(PREPAID_CODE_PREFIX)) return apiKey;
  return prepaidCodeFor(request);
}
