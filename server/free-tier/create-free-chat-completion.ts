import { freeChat } from "../../config/free-tier";
import type { AppContext } from "../context/app-context";
import { chatCompletionAnswer } from "../chat/chat-answer";
import { ApiError, isApiError } from "../core/errors";
import { readJsonBody } from "../http/read-json-body";
import { UpstreamError } from "../upstream/upstream-error";
import type { FreeChatParser } from "./free-chat-request";
import { eventStreamAnswer, jsonAnswer, PROVIDER_HEADER, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { rateLimitHeaders } from "../windows/caller-windows";

/**
 * Endpoint 11: a free chat completion with the catalog's free model (`vendor-b/gpt-oss-20b` by default), its body
 * checked by `parse` (built once per endpoint); at most 2048 output tokens (a larger max_tokens or
 * max_completion_tokens is lowered, and the answer says so) and 8192 input tokens, limited per caller address.
 * Refused requests and requests that fail upstream are not counted.
 */
export async function createFreeChatCompletion(
  context: Pick<AppContext, "clientAddresses" | "config" | "freeChatWindows" | "providers">,
  request: ApiRequest,
  parse: FreeChatParser,
): Promise<ApiAnswer> {
  const address = context.clientAddresses.resolve(request);
  const windows = context.freeChatWindows;
  try {
    const parsed = parse((await readJsonBody(request, freeChat.maxBodyBytes)).value);
    return await windows.serve(address, async (rateLimit) => {
      const headers: Record<string, string> = { ...rateLimit, "Cache-Control": "no-store" };
      if (parsed.loweredFrom !== undefined) headers["X-Max-Tokens-Lowered-From"] = String(parsed.loweredFrom);
      try {
        const routes = context.providers.of(context.config.catalog.freeChat, request.trace);
        if (parsed.stream) {
          const { value: stream, provider } = await routes.startStream("/chat/completions", parsed.upstreamBody);
          return eventStreamAnswer(stream.body, { ...headers, [PROVIDER_HEADER]: provider });
        }
        const served = await routes.postJson("/chat/completions", parsed.upstreamBody, chatCompletionAnswer);
        return jsonAnswer(served.value, { headers: { ...headers, [PROVIDER_HEADER]: served.provider } });
      } catch (error) {
        if (!(error instanceof UpstreamError)) throw error;
        throw new ApiError(
          "upstream_error",
          `The free model is temporarily unavailable (${error.message}); this request was not counted`,
        );
      }
    });
  } catch (error) {
    // A refusal's own RateLimit headers (a 429's) are the ones of its moment; others get the caller's use now.
    if (isApiError(error) && error.code !== "free_tier_exhausted") {
      throw error.withHeaders(await windows.headers(address));
    }
    throw error;
  }
}

/** Endpoint 12: the caller's use of both windows. */
export async function freeChatQuota(
  context: Pick<AppContext, "clientAddresses" | "config" | "freeChatWindows">,
  request: ApiRequest,
): Promise<ApiAnswer> {
  const address = context.clientAddresses.resolve(request);
  const windows = context.freeChatWindows;
  const usage = await windows.usage(address);
  const window = (name: string) => {
    const found = usage.find((entry) => entry.name === name)!;
    return { limit: found.limit, used: found.used, reset_seconds: found.resetSeconds };
  };
  return jsonAnswer(
    {
      object: "free_quota",
      model: context.config.catalog.freeChat.id,
      per10Min: window("per10Min"),
      perDay: window("perDay"),
    },
    { headers: { ...rateLimitHeaders(usage, windows.rules), "Cache-Control": "no-store" } },
  );
}
