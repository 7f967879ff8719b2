import { ApiError, isApiError } from "../errors";
import { logEvent } from "../log";

/**
 * Wraps every route: known errors become their OpenAI-shaped answer; anything else is logged and answered with a
 * generic 500 whose body reveals nothing of the cause.
 */
export function handleRoute(handler: (request: Request) => Promise<Response>): (request: Request) => Promise<Response> {
  return async (request) => {
    try {
      return await handler(request);
    } catch (error) {
      if (isApiError(error)) return error.toResponse();
      logEvent("error", "unhandled_error", {
        path: new URL(request.url).pathname,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
      return new ApiError("internal_error", "Internal server error").toResponse();
    }
  };
}
