import { ApiError, isApiError } from "../core/errors";
import { logEvent } from "../core/log";
import { databaseUnavailable, isDatabaseUnavailable } from "../core/database-unavailable";
import type { ApiAnswer } from "./api-answer";
import { errorAnswer } from "./api-answer";
import type { ApiRequest } from "./api-request";

export type ApiHandler = (request: ApiRequest) => Promise<ApiAnswer>;

/**
 * Wraps every handler: known errors become their OpenAI-shaped answer; a database away for now is a 503 (the
 * request is tried before anything is charged); anything else is logged and answered with a generic 500 whose body
 * reveals nothing of the cause.
 */
export function answerErrors(handler: ApiHandler): ApiHandler {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      if (isApiError(error)) return errorAnswer(error);
      if (isDatabaseUnavailable(error)) {
        logEvent("warn", "database_unavailable", {
          path: new URL(request.url).pathname,
          error: (error as Error).message,
          trace_id: request.trace?.span.traceId,
        });
        return errorAnswer(databaseUnavailable());
      }
      logEvent("error", "unhandled_error", {
        path: new URL(request.url).pathname,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
        trace_id: request.trace?.span.traceId,
      });
      return errorAnswer(new ApiError("internal_error", "Internal server error"));
    }
  };
}
