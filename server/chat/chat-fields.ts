import { z } from "zod";

/**
 * OpenAI chat fields, checked as OpenAI documents them, so that a wrong value is a 400 naming the field instead of
 * a provider's 4xx (which a caller sees as a 502, and a paid caller only after paying). One definition for the
 * paid chat (chat-request.ts), the free chat (free-tier/free-chat-request.ts) and, where the Responses API has the
 * same field, responses/responses-request.ts.
 */

/** system, developer, user, assistant or tool: the roles a chat message may have. */
export const messageRole = z.enum(["system", "developer", "user", "assistant", "tool"], {
  error: "must be one of system, developer, user, assistant, tool",
});

const penalty = z
  .number({ error: "must be a number" })
  .min(-2, "must be at least -2")
  .max(2, "must be at most 2")
  .nullish();

/** A function's name as OpenAI accepts it. */
export const functionName = z
  .string({ error: "must be a string" })
  .regex(/^[\w-]{1,64}$/, "must be 1 to 64 letters, digits, underscores or dashes");

/** A function's parameters: a JSON Schema object. */
export const functionParameters = z.record(z.string(), z.unknown(), { error: "must be a JSON Schema object" });

const tool = z.looseObject({
  type: z.literal("function", { error: "must be function" }),
  function: z.looseObject({
    name: functionName,
    description: z.string({ error: "must be a string" }).nullish(),
    parameters: functionParameters.nullish(),
  }),
});

export const toolCall = z.looseObject({
  id: z.string({ error: "must be a string" }),
  type: z.literal("function", { error: "must be function" }),
  function: z.looseObject({ name: functionName, arguments: z.string({ error: "must be a string" }) }),
});

/** A message's tool fields: the calls an assistant made, and the call a tool message answers. */
export const messageToolFields = {
  tool_call_id: z.string({ error: "must be a string" }).nullish(),
  tool_calls: z.array(toolCall, { error: "must be an array of tool calls" }).nullish(),
};

export const temperature = z
  .number({ error: "must be a number" })
  .min(0, "must be at least 0")
  .max(2, "must be at most 2")
  .nullish();

export const topP = z
  .number({ error: "must be a number" })
  .min(0, "must be at least 0")
  .max(1, "must be at most 1")
  .nullish();

/**
 * The request fields both chats check alike (the messages, the model and the output caps differ). Each may be null,
 * as OpenAI's API takes it ("not set"): clients built on it send explicit nulls.
 */
export const chatFields = {
  temperature,
  stream: z.boolean({ error: "must be a boolean" }).nullish(),
  stream_options: z.looseObject({ include_usage: z.boolean().nullish() }).nullish(),
  top_p: topP,
  stop: z
    .union([z.string(), z.array(z.string()).max(4)], { error: "must be a string or an array of at most 4 strings" })
    .nullable()
    .nullish(),
  presence_penalty: penalty,
  frequency_penalty: penalty,
  seed: z.number({ error: "must be an integer" }).int("must be an integer").nullish(),
  user: z.string({ error: "must be a string" }).nullish(),
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
            schema: functionParameters.nullish(),
          }),
        }),
      ],
      { error: "must be an object whose type is text, json_object or json_schema" },
    )
    .nullish(),
  tools: z.array(tool, { error: "must be an array of tools" }).nullish(),
  tool_choice: z
    .union(
      [
        z.enum(["none", "auto", "required"]),
        z.looseObject({ type: z.literal("function"), function: z.looseObject({ name: functionName }) }),
      ],
      { error: "must be none, auto, required or {type: function, function: {name}}" },
    )
    .nullish(),
  parallel_tool_calls: z.boolean({ error: "must be a boolean" }).nullish(),
};
