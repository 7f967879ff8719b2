import type { PaymentScheme } from "../core/payment-scheme";
export type CatalogAccess = "x402" | "free" | "prepaid-bearer";

/** One method and path of an endpoint, as the discovery documents describe it (an alias is one more entry). */
export interface CatalogEndpoint {
  method: "GET" | "POST";
  path: string;
  operationId: string;
  summary: string;
  access: CatalogAccess;
  /** JSON Schema of the request body, derived from the validation schema. */
  requestSchema?: Record<string, unknown>;
  /** A valid request body. */
  example?: Record<string, unknown>;
  bodyOptional: boolean;
  successStatus: 200 | 201;
  responseDescription: string;
  /**
   * The x402 schemes a paid endpoint takes: `exact` (the quote), `upto` (the quote as a maximum, charged the tokens
   * used) for answers billed in tokens, and `batch-settlement` (a channel's voucher, charged as `upto` would be or
   * the quote) for answers, where the deployment offers them.
   */
  schemes?: readonly PaymentScheme[];
  /** How the price is computed, in words (paid endpoints). */
  pricing?: string;
  streaming?: boolean;
  errors: Record<number, string>;
}
