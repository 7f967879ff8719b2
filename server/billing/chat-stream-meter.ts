import { z } from "zod";
import { streamMeter, type EventReading, type StreamMeter } from "./stream-meter";

const text = z.string().nullish().catch(undefined);

/** The fields of a chat.completion.chunk that billing reads; anything else passes unread. */
const chatChunkSchema = z.looseObject({
  choices: z
    .array(
      z.looseObject({
        delta: z
          .looseObject({
            content: text,
            // Providers name reasoning one way or the other; one that sends both sends the same text twice.
            reasoning: text,
            reasoning_content: text,
            refusal: text,
            tool_calls: z
              .array(z.looseObject({ function: z.looseObject({ name: text, arguments: text }).nullish() }))
              .nullish()
              .catch(undefined),
          })
          .nullish()
          .catch(undefined),
      }),
    )
    .nullish()
    .catch(undefined),
  usage: z.looseObject({ completion_tokens: z.number().int().nonnegative().optional() }).nullish().catch(undefined),
});

type ChatChunk = z.output<typeof chatChunkSchema>;

/** The output text of a chunk: content, reasoning, refusal, and tool calls' names and arguments. */
function outputText(chunk: ChatChunk): string {
  let result = "";
  for (const choice of chunk.choices ?? []) {
    const delta = choice.delta;
    if (!delta) continue;
    for (const part of [delta.content, delta.reasoning ?? delta.reasoning_content, delta.refusal]) result += part ?? "";
    for (const call of delta.tool_calls ?? []) result += (call.function?.name ?? "") + (call.function?.arguments ?? "");
  }
  return result;
}

/**
 * A chat completion stream: usage from `usage.completion_tokens`; a chunk carrying only usage (`choices: []`,
 * sent because billing asked for it) is hidden when the caller did not ask for usage itself.
 */
export function chatStreamMeter(options: { allowedOutput: number; hideUsageOnlyChunks: boolean }): StreamMeter {
  return streamMeter(
    options.allowedOutput,
    (event): EventReading => {
      const parsed = chatChunkSchema.safeParse(event);
      if (!parsed.success) return {};
      const chunk = parsed.data;
      const usageOnly = chunk.choices?.length === 0 && chunk.usage !== undefined && chunk.usage !== null;
      return {
        outputTokens: chunk.usage?.completion_tokens,
        text: outputText(chunk),
        hide: options.hideUsageOnlyChunks && usageOnly,
      };
    },
    options.hideUsageOnlyChunks,
  );
}
