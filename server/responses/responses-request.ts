import { z } from "zod";
import { chatLimits } from "../../config/limits";
import type { ChatModel, ModelCatalog } from "../../config/catalog/model-catalog";
import { functionName, functionParameters, chatFields } from "../chat/chat-fields";
import { defaultOutputCap, requireKnownModel, requireOutputWithin } from "../chat/chat-request";
import { refuseUnpricedFields } from "../chat/priced-fields";
import { ApiError } from "../errors";
import { parseOrThrow, requireJsonObject } from "../validation";

const SUPPORTED_FIELDS = [
  "model",
  "input",
  "instructions",
  "max_output_tokens",
  "stream",
  "temperature",
  "top_p",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "metadata",
  "user",
] as const;

const textContent = z.union([
  z.string(),
  z.array(
    z.looseObject({
      type: z.enum(["input_text", "output_text"], { error: "only input_text and output_text parts are supported" }),
      text: z.string(),
    }),
  ),
]);

const messageItem = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"], {
    error: "must be one of user, assistant, system, developer",
  }),
  content: textContent,
});

const functionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: functionName,
  arguments: z.string(),
});

const functionCallOutputItem = z.looseObject({
  type: z.literal("function_call_output"),
  call_id: z.string(),
  output: z.string(),
});

const inputItem = z.union([functionCallItem, functionCallOutputItem, messageItem], {
  error: "must be a message ({role, content}), a function_call or a function_call_output item",
});

const functionTool = z.looseObject({
  type: z.literal("function", { error: "only function tools are supported" }),
  name: functionName,
  description: z.string({ error: "must be a string" }).optional(),
  parameters: functionParameters.nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

export const responsesRequestSchema = z.object({
  model: z.string(),
  input: z.union([
    z.string().min(1, "must not be empty"),
    z.array(inputItem, { error: "must be a string or an array of input items" }).min(1, "must not be empty"),
  ]),
  instructions: z.string().nullable().optional(),
  max_output_tokens: z
    .number({ error: "must be an integer" })
    .int("must be an integer")
    .min(1, "must be at least 1")
    .max(chatLimits.maxOutputTokens, `must be at most ${chatLimits.maxOutputTokens}`)
    .nullable()
    .optional(),
  stream: z.boolean({ error: "must be a boolean" }).nullable().optional(),
  // The fields a chat has too are checked by the chat's rules (chat-fields.ts), null allowed as Responses allows it.
  temperature: chatFields.temperature,
  top_p: chatFields.top_p,
  tools: z.array(functionTool).optional(),
  tool_choice: z
    .union([z.enum(["auto", "none", "required"]), z.looseObject({ type: z.literal("function"), name: functionName })], {
      error: "must be none, auto, required or {type: function, name}",
    })
    .optional(),
  parallel_tool_calls: chatFields.parallel_tool_calls,
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: chatFields.user,
});

export type ResponsesRequest = z.output<typeof responsesRequestSchema>;

export interface ParsedResponsesRequest {
  body: ResponsesRequest;
  model: ChatModel;
  maxOutputTokens: number;
}

/** Validates a Responses body; every failure is a 400 naming the field, and unsupported fields are named. */
export function parseResponsesRequest(value: unknown, catalog: ModelCatalog): ParsedResponsesRequest {
  requireJsonObject(value);
  const model = requireKnownModel((value as { model?: unknown }).model, catalog);
  // Named for what it would cost before it is named unsupported: the reason to remove it is the price.
  refuseUnpricedFields(value, "/v1/responses");
  const unsupported = Object.keys(value).find((key) => !(SUPPORTED_FIELDS as readonly string[]).includes(key));
  if (unsupported) {
    throw new ApiError(
      "invalid_request",
      `Unsupported parameter: '${unsupported}'. The Responses API here (alpha) supports: ${SUPPORTED_FIELDS.join(", ")}`,
      { param: unsupported },
    );
  }
  if (!("input" in value))
    throw new ApiError("invalid_request", "Missing required parameter: 'input'", { param: "input" });
  const body = parseOrThrow(responsesRequestSchema, value);
  const maxOutputTokens = body.max_output_tokens ?? defaultOutputCap(model);
  requireOutputWithin(model, maxOutputTokens, "max_output_tokens");
  return { body, model, maxOutputTokens };
}
