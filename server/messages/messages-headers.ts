import { ApiError } from "../core/errors";
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

/**
 * Betas under which the provider bills a call at rates the catalog's price does not cover: the 1M-token context
 * window (premium rates past 200,000 input tokens). Asked for, the call is refused, as a Messages field that raises
 * the price is (messages-fields.ts).
 */
const PREMIUM_BETAS = [{ prefix: "context-1m-", charge: "the 1M-token context window is billed at premium rates" }];

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
    if (name === "anthropic-beta") refusePremiumBetas(value);
    (forwarded ??= {})[name] = value;
  }
  return forwarded;
}

/** A beta list naming a beta the price does not cover: 400 naming it and why, before anything is charged. */
function refusePremiumBetas(list: string): void {
  for (const beta of list.split(",").map((name) => name.trim())) {
    const premium = PREMIUM_BETAS.find((entry) => beta.startsWith(entry.prefix));
    if (premium) {
      throw new ApiError(
        "invalid_request",
        `anthropic-beta: ${beta} is not sold here: ${premium.charge}, which this deployment's price does not cover`,
        { param: "anthropic-beta" },
      );
    }
  }
}
