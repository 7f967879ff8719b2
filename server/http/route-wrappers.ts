import { isApiError, type ApiError } from "../core/errors";
import type { ApiAnswer } from "./api-answer";
import type { ApiHandler } from "./answer-errors";
import type { ApiRequest } from "./api-request";

/**
 * One concern a route has around its handler (its errors in an API's shape, CORS, a limit, counting, billing),
 * as middleware composes: given the handler it wraps, the handler with the concern added.
 */
export type RouteWrapper = (next: ApiHandler) => ApiHandler;

/** `handler` inside `wrappers`, the first of them outermost; an undefined wrapper (a concern a route lacks) is skipped. */
export function composeRoute(handler: ApiHandler, ...wrappers: readonly (RouteWrapper | undefined)[]): ApiHandler {
  return wrappers.reduceRight<ApiHandler>((next, wrap) => (wrap ? wrap(next) : next), handler);
}

/** Errors the handler throws answered in an API's own error shape (Anthropic's, for the Messages API). */
export function errorsAnsweredBy(errorAnswer: (error: ApiError) => ApiAnswer): RouteWrapper {
  return (next) => async (request) => {
    try {
      return await next(request);
    } catch (error) {
      if (isApiError(error)) return errorAnswer(error);
      throw error;
    }
  };
}

/** The handler's 402s reworded by an API with a payment error shape of its own; every other answer as it is. */
export function challengesAnsweredBy(challengeAnswer: (answer: ApiAnswer) => ApiAnswer): RouteWrapper {
  return (next) => async (request) => {
    const answer = await next(request);
    return answer.status === 402 ? challengeAnswer(answer) : answer;
  };
}

/** Runs `check` before the handler: what it throws is the answer (a limit reached), and the handler never runs. */
export function checkedFirst(check: (request: ApiRequest) => void): RouteWrapper {
  return (next) => async (request) => {
    check(request);
    return next(request);
  };
}

/** Tells `seen` every answer the handler gives (counting it). */
export function answersSeenBy(seen: (answer: ApiAnswer) => void): RouteWrapper {
  return (next) => async (request) => {
    const answer = await next(request);
    seen(answer);
    return answer;
  };
}
