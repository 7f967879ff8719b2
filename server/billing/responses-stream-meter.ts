import { z } from "zod";
import { streamMeter, type EventReading, type StreamMeter } from "./stream-meter";

/** The fields of a Responses stream event that billing reads; anything else passes unread. */
const responsesEventSchema = z.looseObject({
  type: z.string().optional().catch(undefined),
  delta: z.string().optional().catch(undefined),
  response: z
    .looseObject({
      usage: z
        .looseObject({ output_tokens: z.number().int().nonnegative().optional().catch(undefined) })
        .nullish()
        .catch(undefined),
    })
    .nullish()
    .catch(undefined),
});

/** The events whose `delta` is output text: the message's text and the function calls' arguments. */
const TEXT_EVENTS = new Set(["response.output_text.delta", "response.function_call_arguments.delta"]);

/**
 * A Responses stream (as translateToResponsesStream makes it from chat chunks): usage on `response.completed`
 * only, text in the delta events.
 */
export function responsesStreamMeter(options: { allowedOutput: number }): StreamMeter {
  const read = (event: object): EventReading => {
    const parsed = responsesEventSchema.safeParse(event);
    if (!parsed.success) return {};
    const { type, delta, response } = parsed.data;
    return {
      outputTokens: type === "response.completed" ? response?.usage?.output_tokens : undefined,
      text: type !== undefined && TEXT_EVENTS.has(type) ? delta : undefined,
    };
  };
  return streamMeter(options.allowedOutput, read);
}
