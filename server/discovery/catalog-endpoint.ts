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
   * The x402 schemes a paid endpoint takes: `exact` (the quote), and `upto` (the quote as a maximum, charged the
   * tokens used) for whole answers billed in tokens, where the deployment offers it.
   */
  schemes?: readonly ("exact" | "upto")[];
  /** How the price is computed, in words (paid endpoints). */
  pricing?: string;
  streaming?: boolean;
  errors: Record<number, string>;
}
