import type { PaidEndpoint } from "../endpoints/endpoint";
import type { ApiRequest } from "../http/api-request";
import { prepaidCodeFor } from "../prepaid/prepaid-code";

/**
 * The prepaid key a request carries where its endpoint takes one (where the endpoint's API reads it: the bearer
 * unless told); undefined when the request is to be paid with x402.
 */
export function prepaidCodeOf(endpoint: PaidEndpoint, request: ApiRequest): string | undefined {
  return endpoint.access.includes("prepaid") ? (endpoint.prepaidKey ?? prepaidCodeFor)(request) : undefined;
}

/** Whether a request carries an x402 payment (v2 PAYMENT-SIGNATURE, v1 X-PAYMENT). */
export function carriesX402Payment(request: ApiRequest): boolean {
  return request.headers.get("payment-signature") !== null || request.headers.get("x-payment") !== null;
}
