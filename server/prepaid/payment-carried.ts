import type { PaymentAccess } from "../billing/payment-methods";
import type { ApiRequest } from "../http/api-request";
import { prepaidCodeFor } from "./prepaid-code";

/**
 * The prepaid key a request carries where its endpoint takes one (where the endpoint's API reads it: the bearer
 * unless told); undefined when the request is to be paid otherwise.
 */
export function prepaidCodeOf(endpoint: PaymentAccess, request: ApiRequest): string | undefined {
  return endpoint.access.includes("prepaid") ? (endpoint.prepaidKey ?? prepaidCodeFor)(request) : undefined;
}
