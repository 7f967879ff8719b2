import type { AppContext } from "../app-context";
import { ApiError } from "../errors";
import { bearerToken, looksLikePrepaidCode } from "./prepaid-code";
import type { PrepaidKey } from "./prepaid-key-store";
import type { ApiRequest } from "../http/api-request";

/**
 * The prepaid key a request is billed to, or undefined for an x402 request. Any other bearer is not an error:
 * the official SDK always sends one (x402 payers configure a placeholder such as "x402").
 */
export function prepaidKeyFor(context: AppContext, request: ApiRequest): PrepaidKey | undefined {
  const token = bearerToken(request);
  if (!token || !looksLikePrepaidCode(token)) return undefined;
  const key = context.prepaidKeys.findByCode(token);
  if (!key) throw new ApiError("invalid_api_key", "Incorrect prepaid key provided: no such key.");
  return key;
}
