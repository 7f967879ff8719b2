import { z } from "zod";
import { chatLimits } from "../../config/limits";
import type { ChatModel, ModelCatalog } from "../../config/catalog/model-catalog";
import { functionName, chatFields } from "../chat/chat-fields";
import { defaultOutputCap, requireKnownModel, requireOutputWithin } from "../chat/chat-request";
import { refuseUnpricedFields } from "../chat/priced-fields";
import type { ChatRequestBody } from "../chat/chat-wire";
import { ApiError } from "../core/errors";
import { parseOrThrow, requireJsonObject } from "../core/validation";
import { inputItem, tool, type InputItem, type ResponsesTool } from "./responses-items";
import { quickCheckPasses, SCHEMA_CHECKED_FIELDS } from "./responses-quick-check";

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
  // Accepted for what chat can honour of them, else dropped when translating (passed on to a native route):
  "reasoning",
  "text",
  "include",
  "store",
  "truncation",
  "prompt_cache_key",
  "prompt_cache_retention",
  "safety_identifier",
  "client_metadata",
] as const;

const nullableString = z.string({ error: "must be a string" }).nullable().optional();

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
  tools: z.array(tool, { error: "must be an array of tools" }).nullable().optional(),
  tool_choice: z
    .union(
      [
        z.enum(["auto", "none", "required"]),
        z.looseObject({ type: z.enum(["function", "custom"]), name: functionName }),
        // A hosted tool or an allowed-tools list: nothing chat can be told, dropped when translating.
        z.looseObject({ type: z.string() }).refine((choice) => choice.type !== "function" && choice.type !== "custom"),
      ],
      { error: "must be none, auto, required or {type: function, name}" },
    )
    .optional(),
  parallel_tool_calls: chatFields.parallel_tool_calls,
  metadata: z.record(z.string(), z.string()).nullable().optional(),
  user: chatFields.user,
  reasoning: z
    .looseObject({
      effort: z
        .enum(["none", "minimal", "low", "medium", "high", "xhigh"], {
          error: "must be none, minimal, low, medium, high or xhigh",
        })
        .nullable()
        .optional(),
      summary: nullableString,
    })
    .nullable()
    .optional(),
  text: z
    .looseObject({
      format: z
        .looseObject({
          type: z.enum(["text", "json_object", "json_schema"], { error: "must be text, json_object or json_schema" }),
        })
        .nullable()
        .optional(),
      verbosity: z.enum(["low", "medium", "high"], { error: "must be low, medium or high" }).nullable().optional(),
    })
    .nullable()
    .optional(),
  include: z
    .array(z.string({ error: "must be a string" }), { error: "must be an array of strings" })
    .nullable()
    .optional(),
  store: z.boolean({ error: "must be a boolean" }).nullable().optional(),
  truncation: z.enum(["auto", "disabled"], { error: "must be auto or disabled" }).nullable().optional(),
  prompt_cache_key: nullableString,
  prompt_cache_retention: nullableString,
  safety_identifier: nullableString,
  client_metadata: z.record(z.string(), z.unknown(), { error: "must be an object" }).nullable().optional(),
});

export type ResponsesRequest = Omit<z.output<typeof responsesRequestSchema>, "input" | "tools"> & {
  input: string | InputItem[];
  tools?: ResponsesTool[] | null;
};

export interface ParsedResponsesRequest {
  body: ResponsesRequest;
  /** The request as it came, for a route that speaks Responses natively. */
  raw: Record<string, unknown>;
  model: ChatModel;
  maxOutputTokens: number;
}

/** A Responses request, parsed, with the canonical chat call it is translated to. */
export interface ResponsesCall extends ParsedResponsesRequest {
  chatRequest: ChatRequestBody;
  stream: boolean;
  /** The custom (freeform) tools' names: a chat call of one is answered as a custom_tool_call. */
  customTools: ReadonlySet<string>;
}

/**
 * The body as the schema parses it, where the quick check (responses-quick-check.ts) passes it: the body as it came,
 * with `tools` and `tool_choice` as the schema's field parsers write them (the Response echoes them); undefined for
 * the schema to decide.
 */
function quickParsed(value: Record<string, unknown>): ResponsesRequest | undefined {
  if (!quickCheckPasses(value)) return undefined;
  const body: Record<string, unknown> = { ...value };
  for (const field of SCHEMA_CHECKED_FIELDS) {
    if (!(field in value)) continue;
    const result = responsesRequestSchema.shape[field].safeParse(value[field]);
    if (!result.success) return undefined;
    body[field] = result.data;
  }
  return body as ResponsesRequest;
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
  const body = quickParsed(value) ?? (parseOrThrow(responsesRequestSchema, value) as ResponsesRequest);
  const maxOutputTokens = body.max_output_tokens ?? defaultOutputCap(model);
  requireOutputWithin(model, maxOutputTokens, "max_output_tokens");
  return { body, raw: value as Record<string, unknown>, model, maxOutputTokens };
}
