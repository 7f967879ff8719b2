import { z } from "zod";
import { chatRequestSchema } from "../chat/chat-request";

/**
 * OpenAI chat fields, checked as OpenAI documents them, so that a wrong value is a 400 naming the field instead of
 * a provider's 4xx (which a caller sees as 502). Where the paid chat already checks a field, its rule is reused so
 * both endpoints agree; the others are here, in a form the paid chat could import as they are.
 */
const paid = chatRequestSchema.shape;

/** system, developer, user, assistant or tool: the roles the paid chat accepts. */
export const messageRole = paid.messages.element.shape.role;

const penalty = z
  .number({ error: "must be a number" })
  .min(-2, "must be at least -2")
  .max(2, "must be at most 2")
  .optional();

const functionName = z
  .string({ error: "must be a string" })
  .regex(/^[\w-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes");

const tool = z.looseObject({
  type: z.literal("function", { error: "must be function" }),
  function: z.looseObject({
    name: functionName,
    description: z.string({ error: "must be a string" }).optional(),
    parameters: z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" }).optional(),
  }),
});

export const toolCall = z.looseObject({
  id: z.string({ error: "must be a string" }),
  type: z.literal("function", { error: "must be function" }),
  function: z.looseObject({ name: functionName, arguments: z.string({ error: "must be a string" }) }),
});

export const chatFields = {
  temperature: paid.temperature,
  stream: paid.stream,
  stream_options: paid.stream_options,
  top_p: z.number({ error: "must be a number" }).min(0, "must be at least 0").max(1, "must be at most 1").optional(),
  stop: z
    .union([z.string(), z.array(z.string()).max(4)], { error: "must be a string or an array of at most 4 strings" })
    .nullable()
    .optional(),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  seed: z.number({ error: "must be an integer" }).int("must be an integer").optional(),
  user: z.string({ error: "must be a string" }).optional(),
  response_format: z
    .discriminatedUnion(
      "type",
      [
        z.looseObject({ type: z.literal("text") }),
        z.looseObject({ type: z.literal("json_object") }),
        z.looseObject({
          type: z.literal("json_schema"),
          json_schema: z.looseObject({
            name: functionName,
            schema: z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" }).optional(),
          }),
        }),
      ],
      { error: "must be an object whose type is text, json_object or json_schema" },
    )
    .optional(),
  tools: z.array(tool, { error: "must be an array of tools" }).optional(),
  tool_choice: z
    .union(
      [
        z.enum(["none", "auto", "required"]),
        z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: functionName }) }),
      ],
      { error: "must be none, auto, required or {type: function, function: {name}}" },
    )
    .optional(),
  parallel_tool_calls: z.boolean({ error: "must be a boolean" }).optional(),
};
