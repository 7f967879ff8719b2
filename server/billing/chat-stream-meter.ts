import { z } from "zod";
import { completionTokens, promptTokens } from "../chat/chat-usage";
import { streamMeter, type EventReading, type StreamMeter } from "./stream-meter";

// Every field is caught where it is read: one odd field (a provider's null, a number where text was expected)
// must cost only its own text, never the rest of the chunk's, and never fail the chunk.
const text = z.string().nullish().catch(undefined);

const toolCallSchema = z
  .looseObject({ function: z.looseObject({ name: text, arguments: text }).nullish().catch(undefined) })
  .nullable()
  .catch(null);

const deltaSchema = z
  .looseObject({
    content: text,
    // Providers name reasoning one way or the other; one that sends both sends the same text twice.
    reasoning: text,
    reasoning_content: text,
    refusal: text,
    tool_calls: z.array(toolCallSchema).nullish().catch(undefined),
  })
  .nullish()
  .catch(undefined);

/** The fields of a chat.completion.chunk that billing reads; anything else passes unread. */
const chatChunkSchema = z.looseObject({
  choices: z
    .array(z.looseObject({ delta: deltaSchema }).nullable().catch(null))
    .optional()
    .catch(undefined),
  // A count that is not a whole non-negative number is no report.
  usage: z
    .looseObject({
      completion_tokens: z.number().int().nonnegative().optional().catch(undefined),
      prompt_tokens: z.number().int().nonnegative().optional().catch(undefined),
    })
    .nullable()
    .optional()
    .catch(null),
});

type ChatChunk = z.output<typeof chatChunkSchema>;

/** The output text of a chunk: content, reasoning, refusal, and tool calls' names and arguments. */
function chatChunkText(chunk: ChatChunk): string {
  let result = "";
  for (const choice of chunk.choices ?? []) {
    const delta = choice?.delta;
    if (!delta) continue;
    for (const part of [delta.content, delta.reasoning ?? delta.reasoning_content, delta.refusal]) result += part ?? "";
    for (const call of delta.tool_calls ?? []) {
      result += (call?.function?.name ?? "") + (call?.function?.arguments ?? "");
    }
  }
  return result;
}

/**
 * The canonical chat completion stream (chat/chat-wire.ts), which every dialect's call is metered as: usage from
 * `usage.completion_tokens` (and the input's, `prompt_tokens`) of any chunk, text from the deltas.
 */
export function chatStreamMeter(options: { allowedOutput: number }): StreamMeter {
  const read = (event: object): EventReading => {
    const parsed = chatChunkSchema.safeParse(event);
    // Only an array in place of the chunk fails: nothing in it to read.
    if (!parsed.success) return {};
    const chunk = parsed.data;
    return {
      outputTokens: chunk.usage?.completion_tokens,
      inputTokens: chunk.usage?.prompt_tokens,
      text: chatChunkText(chunk),
    };
  };
  return streamMeter(options.allowedOutput, read);
}

/** How billing reads the output tokens of a call billed in tokens: a whole completion's usage, or its stream. */
export const chatUsageReader = {
  fromJson: completionTokens,
  inputFromJson: promptTokens,
  streamMeter: (allowedOutput: number): StreamMeter => chatStreamMeter({ allowedOutput }),
};
