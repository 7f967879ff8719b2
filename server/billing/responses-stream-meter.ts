import { z } from "zod";
import { streamMeter, type EventReading, type StreamMeter } from "./stream-meter";

/** The fields of a Responses stream event that billing reads. */
const responsesEventSchema = z.looseObject({
  type: z.string(),
  delta: z.string().optional().catch(undefined),
  response: z
    .looseObject({
      usage: z.looseObject({ output_tokens: z.number().int().nonnegative().optional() }).nullish().catch(undefined),
    })
    .optional()
    .catch(undefined),
});

const TEXT_EVENTS = new Set(["response.output_text.delta", "response.function_call_arguments.delta"]);

/** A Responses stream (as translated from chat): usage on `response.completed`, text in the delta events. */
export function responsesStreamMeter(options: { allowedOutput: number }): StreamMeter {
  return streamMeter(options.allowedOutput, (event): EventReading => {
    const parsed = responsesEventSchema.safeParse(event);
    if (!parsed.success) return {};
    const { type, delta, response } = parsed.data;
    return {
      outputTokens: type === "response.completed" ? response?.usage?.output_tokens : undefined,
      text: TEXT_EVENTS.has(type) ? delta : undefined,
    };
  });
}
