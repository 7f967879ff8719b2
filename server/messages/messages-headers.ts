import { ApiError } from "../errors";
import type { ApiRequest } from "../http/api-request";

/**
 * The caller's headers a route that speaks Messages natively is sent: the beta features it asks for
 * (`anthropic-beta`, Claude Code's list) and the API version it speaks (`anthropic-version`). No other header of the
 * caller's reaches a provider, and these reach only a native Messages route (never a chat route, which would not
 * know them); a route's own configured headers win over them (openai-upstream.ts).
 */
export const FORWARDED_MESSAGES_HEADERS = ["anthropic-beta", "anthropic-version"] as const;

/** The longest value forwarded: a beta list of some 40 names. */
export const MAX_FORWARDED_HEADER_LENGTH = 1024;

/** RFC 9110's token characters, commas and spaces: a comma-separated list of tokens, such as a beta list. */
const TOKEN_LIST = /^[!#$%&'*+.^_`|~0-9A-Za-z\-, \t]*$/;

/**
 * The forwarded headers the request carries (absent or empty ones left out), undefined when none; a value that is
 * not a list of tokens, or longer than MAX_FORWARDED_HEADER_LENGTH, is refused with a 400 before anything is charged.
 */
export function forwardedMessagesHeaders(request: ApiRequest | undefined): Record<string, string> | undefined {
  if (request === undefined) return undefined;
  let forwarded: Record<string, string> | undefined;
  for (const name of FORWARDED_MESSAGES_HEADERS) {
    const value = request.headers.get(name)?.trim();
    if (!value) continue;
    if (value.length > MAX_FORWARDED_HEADER_LENGTH || !TOKEN_LIST.test(value)) {
      throw new ApiError(
        "invalid_request",
        `${name}: must be a comma-separated list of names (letters, digits and !#$%&'*+-.^_\`|~), at most ${MAX_FORWARDED_HEADER_LENGTH} characters`,
        { param: name },
      );
    }
    (forwarded ??= {})[name] = value;
  }
  return forwarded;
}
