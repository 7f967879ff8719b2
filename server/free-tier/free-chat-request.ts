import { z } from "zod";
import { freeChat } from "../../config/free-tier";
import { ApiError } from "../core/errors";
import { countChatRequestInputTokens } from "../pricing/count-tokens";
import { TokenCounter } from "../pricing/linear-token-count";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { chatFields, messageRole, messageToolFields } from "../chat/chat-fields";

/** An output cap as a caller may ask it; above the free cap it is lowered, not refused. */
const outputCap = z.number({ error: "must be an integer" }).int("must be an integer").min(1, "must be at least 1");

/**
 * The free chat request. A plain (not loose) object: fields it does not name are dropped, never forwarded, since the
 * operator pays for whatever reaches the provider (`service_tier`, `reasoning_effort`, `store` and the like).
 */
const freeChatSchema = (modelId: string) =>
  z.object({
    model: z.literal(modelId, { error: `only ${modelId} is served free` }).optional(),
    messages: z
      .array(
        z.object({
          role: messageRole,
          content: z.string({ error: "must be a string" }),
          name: z.string({ error: "must be a string" }).optional(),
          ...messageToolFields,
        }),
        { error: "must be an array of messages" },
      )
      .min(1, "must contain at least one message"),
    max_tokens: outputCap.optional(),
    max_completion_tokens: outputCap.optional(),
    // More choices would multiply the output past the cap.
    n: z.literal(1, { error: "must be 1: the free tier answers with one choice" }).optional(),
    ...chatFields,
  });

export type FreeChatBody = z.output<ReturnType<typeof freeChatSchema>>;

export interface FreeChatRequest {
  /** What the provider is sent: the checked fields, with the free cap as its only output cap. */
  upstreamBody: Record<string, unknown>;
  stream: boolean;
  /** The output cap the caller asked for, when above the free cap (to say it was lowered). */
  loweredFrom: number | undefined;
  inputTokens: number;
}

/** Input the model reads, counted as a paid quote counts it: messages, tools and a structured-output schema. */
export function countFreeChatInputTokens(body: FreeChatBody, counter = new TokenCounter()): number {
  return countChatRequestInputTokens(body, counter);
}

/** The free model's request: its schema, built once, and the parser that checks with it. */
export function freeChatRequests(modelId: string) {
  const schema = freeChatSchema(modelId);
  return { schema, parse: (value: unknown) => parseFreeChatRequest(value, modelId, schema) };
}

export type FreeChatParser = ReturnType<typeof freeChatRequests>["parse"];

/** Checks a free chat body; every refusal is a 400 naming the field, before the caller's quota is touched. */
function parseFreeChatRequest(
  value: unknown,
  modelId: string,
  schema: ReturnType<typeof freeChatSchema>,
): FreeChatRequest {
  requireJsonObject(value);
  const body = parseOrThrow(schema, value);
  // Counting stops soon past the free limit (then the exact count is not known): a body of megabytes costs no more
  // than one at the limit, and holds no other request up.
  const inputTokens = countFreeChatInputTokens(body, new TokenCounter(freeChat.maxInputTokens));
  if (inputTokens > freeChat.maxInputTokens) {
    throw new ApiError(
      "context_length_exceeded",
      `The input counts more than ${freeChat.maxInputTokens} tokens; the free tier reads at most ${freeChat.maxInputTokens}. Shorten the messages, or use the paid endpoint /v1/chat/completions`,
      { param: "messages" },
    );
  }
  // max_completion_tokens wins over max_tokens, as with the paid chat and OpenAI; only one cap is sent on.
  const { max_tokens, max_completion_tokens, n: _one, ...rest } = body;
  const requested = max_completion_tokens ?? max_tokens;
  return {
    upstreamBody: {
      ...rest,
      model: modelId,
      max_tokens: Math.min(requested ?? freeChat.maxTokens, freeChat.maxTokens),
    },
    stream: body.stream === true,
    loweredFrom: requested !== undefined && requested > freeChat.maxTokens ? requested : undefined,
    inputTokens,
  };
}
