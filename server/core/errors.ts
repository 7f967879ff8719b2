/**
 * One error type for everything a caller can be told, and one table from code to HTTP status and OpenAI error
 * type. Bodies use OpenAI's shape `{error: {message, type, param, code}}`.
 */
const errorTable = {
  invalid_request: { status: 400, type: "invalid_request_error" },
  // The embeddings endpoint's 400 has the spec's own shape: type "invalid_request" and `details`.
  invalid_embeddings_request: { status: 400, type: "invalid_request" },
  invalid_json: { status: 400, type: "invalid_request_error" },
  model_not_found: { status: 400, type: "invalid_request_error" },
  context_length_exceeded: { status: 400, type: "invalid_request_error" },
  request_too_large: { status: 413, type: "invalid_request_error" },
  unsupported_media_type: { status: 415, type: "invalid_request_error" },
  not_found: { status: 404, type: "invalid_request_error" },
  method_not_allowed: { status: 405, type: "invalid_request_error" },
  invalid_api_key: { status: 401, type: "invalid_request_error" },
  // A wallet's sign-in (SIGN-IN-WITH-X) refused: the message says why (auth/wallet-sign-in.ts).
  invalid_sign_in: { status: 401, type: "authentication_error" },
  // A wallet signed in, asking for what is not its own (a key of another wallet answers not_found instead).
  sign_in_required: { status: 402, type: "authentication_error" },
  insufficient_quota: { status: 429, type: "insufficient_quota" },
  free_tier_exhausted: { status: 429, type: "rate_limit_error" },
  // A prepaid key or paying wallet over one of its rate limits (limits/rate-limiter.ts).
  rate_limit_exceeded: { status: 429, type: "rate_limit_error" },
  payment_required: { status: 402, type: "payment_required" },
  payment_invalid: { status: 402, type: "payment_error" },
  payment_mismatch: { status: 402, type: "payment_error" },
  payment_already_used: { status: 402, type: "payment_error" },
  payment_rejected: { status: 402, type: "payment_error" },
  settlement_failed: { status: 402, type: "payment_error" },
  // An upto payment whose maximum, with the payer's payments in flight, goes past what it can pay (payer-exposure.ts).
  payer_limit_exceeded: { status: 402, type: "payment_error" },
  // An upto stream from a payer whose streamed answer went unpaid lately: it can only pay settled-first, with exact.
  payer_in_debt: { status: 402, type: "payment_error" },
  // An upto stream cut before its payment's deadline (billing/usage-stream-settlement.ts), in its error event.
  payment_expired: { status: 402, type: "payment_error" },
  // A payment-identifier sent again with another request (billing/paid-retries.ts).
  payment_identifier_conflict: { status: 409, type: "invalid_request_error" },
  // A payment-identifier sent again with a new payment while its first request is still answered.
  payment_identifier_busy: { status: 409, type: "invalid_request_error" },
  upstream_error: { status: 502, type: "upstream_error" },
  facilitator_unavailable: { status: 503, type: "service_unavailable" },
  service_unavailable: { status: 503, type: "service_unavailable" },
  shutting_down: { status: 503, type: "service_unavailable" },
  // The database is stopped, restarting or not answering in time (database-unavailable.ts).
  database_unavailable: { status: 503, type: "service_unavailable" },
  internal_error: { status: 500, type: "server_error" },
} as const satisfies Record<string, { status: number; type: string }>;

export type ErrorCode = keyof typeof errorTable;

export class ApiError extends Error {
  readonly status: number;
  readonly type: string;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly options: {
      param?: string | null;
      headers?: Record<string, string>;
      /** Fields beside `error` in the body. */
      extra?: Record<string, unknown>;
      /** Fields inside `error` after the standard four. */
      details?: Record<string, unknown>;
    } = {},
  ) {
    super(message);
    this.name = "ApiError";
    this.status = errorStatus(code);
    this.type = errorTable[code].type;
  }

  /** The same error with more headers (rate limits, for instance). */
  withHeaders(headers: Record<string, string>): ApiError {
    return new ApiError(this.code, this.message, { ...this.options, headers: { ...this.options.headers, ...headers } });
  }

  /** The answer's body: OpenAI's error object, with the fields beside it. */
  body(): Record<string, unknown> {
    return { ...this.options.extra, error: errorObject(this.code, this.message, this.options) };
  }

  /** The answer's headers beside the body's (Retry-After, rate limits). */
  get headers(): Record<string, string> | undefined {
    return this.options.headers;
  }
}

/** OpenAI's error object for a code: `{message, type, param, code}`, then any details. */
export function errorObject(
  code: ErrorCode,
  message: string,
  options: { param?: string | null; details?: Record<string, unknown> } = {},
): Record<string, unknown> {
  return { message, type: errorTable[code].type, param: options.param ?? null, code, ...options.details };
}

export function errorStatus(code: ErrorCode): number {
  return errorTable[code].status;
}

export function isApiError(error: unknown): error is ApiError {
  return error instanceof ApiError;
}
