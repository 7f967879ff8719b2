import { z } from "zod";
import { freeChat } from "../../config/free-tier";
import type { AppContext } from "../app-context";
import { ApiError, isApiError } from "../errors";
import { readJsonBody } from "../http/read-json-body";
import { UpstreamError } from "../upstream/upstream-error";
import { parseOrThrow } from "../validation";
import type { WindowUsage } from "./free-chat-windows";
import { eventStreamAnswer, jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

export const freeChatSchema = z.looseObject({
  model: z.literal(freeChat.model, { error: `only ${freeChat.model} is served free` }).optional(),
  messages: z
    .array(
      z.looseObject({
        role: z.string({ error: "must be a string" }),
        content: z.string({ error: "must be a string" }),
      }),
      {
        error: "must be an array of messages",
      },
    )
    .min(1, "must contain at least one message"),
  max_tokens: z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(1, "must be at least 1")
    .optional(),
  stream: z.boolean({ error: "must be a boolean" }).optional(),
});

/** IETF RateLimit headers for the window closest to its limit. */
function rateLimitHeaders(windows: WindowUsage[]): Record<string, string> {
  const tightest = [...windows].sort((a, b) => a.limit - a.used - (b.limit - b.used))[0]!;
  return {
    "RateLimit-Policy": windows
      .map((window) => `${window.limit};w=${window.name === "perDay" ? 86400 : 600}`)
      .join(", "),
    "RateLimit-Limit": String(tightest.limit),
    "RateLimit-Remaining": String(Math.max(0, tightest.limit - tightest.used)),
    "RateLimit-Reset": String(tightest.resetSeconds),
  };
}

/**
 * Endpoint 11: a free chat completion with `vendor-b/gpt-oss-20b`, at most 2048 output tokens (a larger
 * max_tokens is lowered, and the answer says so), limited per caller address. Refused requests and requests that
 * fail upstream are not counted.
 */
export async function createFreeChatCompletion(context: AppContext, request: ApiRequest): Promise<ApiAnswer> {
  const address = context.clientAddresses.resolve(request);
  const windows = context.freeChatWindows;
  try {
    const body = parseOrThrow(freeChatSchema, (await readJsonBody(request)).value);
    const slot = windows.take(address);
    if (slot === undefined) {
      const exhausted = windows.usage(address).filter((window) => window.used >= window.limit);
      const retryAfter = Math.max(...exhausted.map((window) => window.resetSeconds), 1);
      throw new ApiError(
        "free_tier_exhausted",
        `The free tier allows ${freeChat.windows.map((window) => `${window.limit} requests ${window.name === "perDay" ? "per day" : "per 10 minutes"}`).join(" and ")} per caller; retry in ${retryAfter} s or use the paid endpoint /v1/chat/completions`,
        { headers: { "Retry-After": String(retryAfter) }, extra: { retry_after: retryAfter } },
      );
    }
    const maxTokens = Math.min(body.max_tokens ?? freeChat.maxTokens, freeChat.maxTokens);
    const upstreamBody = { ...body, model: freeChat.model, max_tokens: maxTokens };
    const headers: Record<string, string> = {
      ...rateLimitHeaders(windows.usage(address)),
      "Cache-Control": "no-store",
    };
    if (body.max_tokens !== undefined && body.max_tokens > freeChat.maxTokens) {
      headers["X-Max-Tokens-Lowered-From"] = String(body.max_tokens);
    }
    try {
      if (body.stream === true) {
        const stream = await context.upstream.startStream("/chat/completions", upstreamBody);
        return eventStreamAnswer(stream.body, headers);
      }
      const completion = await context.upstream.postJson("/chat/completions", upstreamBody);
      return jsonAnswer({ ...completion, model: freeChat.model }, { headers });
    } catch (error) {
      windows.give(slot);
      if (error instanceof UpstreamError) {
        throw new ApiError(
          "upstream_error",
          `The free model is temporarily unavailable (${error.message}); this request was not counted`,
        );
      }
      throw error;
    }
  } catch (error) {
    if (isApiError(error)) throw error.withHeaders(rateLimitHeaders(windows.usage(address)));
    throw error;
  }
}

/** Endpoint 12: the caller's use of both windows. */
export function freeChatQuota(context: AppContext, request: ApiRequest): ApiAnswer {
  const address = context.clientAddresses.resolve(request);
  const usage = context.freeChatWindows.usage(address);
  const window = (name: string) => {
    const found = usage.find((entry) => entry.name === name)!;
    return { limit: found.limit, used: found.used, reset_seconds: found.resetSeconds };
  };
  return jsonAnswer(
    { object: "free_quota", model: freeChat.model, per10Min: window("per10Min"), perDay: window("perDay") },
    { headers: { ...rateLimitHeaders(usage), "Cache-Control": "no-store" } },
  );
}
