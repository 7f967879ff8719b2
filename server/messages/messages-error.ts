import { isApiError, type ApiError } from "../core/errors";
import { SseEvent } from "../http/event-stream";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";

/**
 * Anthropic's error type for an HTTP status, as its API and official SDK name them (the SDK picks its error class
 * by status: 402 is its PaymentRequiredError, whose body type Anthropic calls billing_error).
 */
export function messagesErrorType(status: number): string {
  switch (status) {
    case 400:
    case 405:
    case 409:
    case 415:
    case 422:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 402:
      return "billing_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
    case 529:
      return "overloaded_error";
    case 504:
      return "timeout_error";
    default:
      return status >= 400 && status < 500 ? "invalid_request_error" : "api_error";
  }
}

/** Anthropic's error body: `{type: "error", error: {type, message}}`. */
export function messagesErrorBody(status: number, message: string): Record<string, unknown> {
  return { type: "error", error: { type: messagesErrorType(status), message } };
}

/** The status of an error in the Messages API: Anthropic answers an unknown model with a 404, chat with a 400. */
export function messagesErrorStatus(error: ApiError): number {
  return error.code === "model_not_found" ? 404 : error.status;
}

/**
 * An error as a Messages answer: Anthropic's body, the error's status (messagesErrorStatus) and headers (a 402
 * keeps PAYMENT-REQUIRED, a 429 its Retry-After). An error that is not an ApiError is a 500 telling nothing more.
 */
export function messagesErrorAnswer(error: unknown): ApiAnswer {
  if (!isApiError(error)) return jsonAnswer(messagesErrorBody(500, "Internal server error"), { status: 500 });
  const status = messagesErrorStatus(error);
  return jsonAnswer(messagesErrorBody(status, error.message), { status, headers: error.options.headers });
}

/** The status an OpenAI error type or code in a canonical stream's error event stands for. */
const STREAM_ERROR_STATUS: Record<string, number> = {
  invalid_request_error: 400,
  payment_required: 402,
  payment_error: 402,
  settlement_failed: 402,
  payment_expired: 402,
  rate_limit_error: 429,
  insufficient_quota: 429,
  service_unavailable: 503,
  upstream_error: 502,
  server_error: 500,
};

/**
 * A canonical stream's error object (`{error: {message, type, code}}`, server/core/errors.ts errorObject) as Anthropic's
 * `event: error` event, typed by what the code or type stands for (api_error when unknown).
 */
export function messagesStreamError(error: { message?: unknown; type?: unknown; code?: unknown }): SseEvent {
  const code = typeof error.code === "string" ? error.code : "";
  const type = typeof error.type === "string" ? error.type : "";
  const status = STREAM_ERROR_STATUS[code] ?? STREAM_ERROR_STATUS[type] ?? 500;
  const message = typeof error.message === "string" && error.message !== "" ? error.message : "The stream failed";
  return SseEvent.of(messagesErrorBody(status, message), "error");
}

/**
 * A 402 billing answered (x402's challenge: the payment document, with OpenAI's error object under `error`) in
 * Anthropic's form: the same status and headers (PAYMENT-REQUIRED, which x402 clients pay from) and the document's
 * fields, with `type: "error"` and Anthropic's error object (billing_error) in place of OpenAI's.
 */
export function messagesChallengeAnswer(answer: ApiAnswer): ApiAnswer {
  if (typeof answer.body !== "string") return answer;
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(answer.body) as Record<string, unknown>;
  } catch {
    return answer;
  }
  const error = document.error as { message?: unknown } | string | undefined;
  const message = typeof error === "string" ? error : typeof error?.message === "string" ? error.message : "";
  const body = { ...document, ...messagesErrorBody(answer.status, message || "Payment required") };
  return jsonAnswer(body, { status: answer.status, headers: answer.headers });
}
