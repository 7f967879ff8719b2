import { z } from "zod";
import { functionName, functionParameters } from "../chat/chat-fields";

/**
 * The input items and tools of a Responses request, as OpenAI's clients (the SDK, Codex CLI) send them. Each is
 * chosen by its `type` and then checked by that type's rules, so that a malformed one is a 400 naming its field;
 * an item or tool this service cannot honour (a reasoning item, a hosted tool such as web_search) is accepted and
 * dropped when translating, never refused.
 */

/** An object whose `type` picks the schema it is checked by; types not in `byType` pass as they are. */
function byType(byType: Record<string, z.ZodType>, fallback?: z.ZodType, untyped?: string) {
  return z.looseObject({ type: z.string({ error: "must be a string" }).optional() }).transform((value, context) => {
    const schema = byType[value.type ?? untyped ?? ""] ?? fallback;
    if (!schema) return value as { type?: string } & Record<string, unknown>;
    const result = schema.safeParse(value);
    if (result.success) return result.data as { type?: string } & Record<string, unknown>;
    for (const issue of result.error.issues)
      context.addIssue({ code: "custom", message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

const textPart = z.looseObject({ type: z.enum(["input_text", "output_text"]), text: z.string() });

/** An image, read and priced where the model reads images (vision/image-parts.ts); by URL or data URL only. */
const imagePart = z.looseObject({
  type: z.literal("input_image"),
  image_url: z.string({ error: "must be an https URL or a data URL (images by file_id are not accepted here)" }),
  detail: z.enum(["low", "high", "auto"], { error: "must be low, high or auto" }).optional(),
});

/** Text and images: files and audio are refused, since the price covers only the tokens of text and of images. */
const contentPart = z.discriminatedUnion("type", [textPart, imagePart], {
  error: "must be an input_text, output_text or input_image part (file and audio parts are not priced here)",
});

export type ContentPart = z.output<typeof contentPart>;

const content = z.union([z.string(), z.array(contentPart)], {
  error: "must be a string or an array of input_text, output_text and input_image parts",
});

/** A tool's output: text, or text and image parts, as a message's content. */
const toolOutput = content;

export const messageItem = z.looseObject({
  type: z.literal("message").optional(),
  role: z.enum(["user", "assistant", "system", "developer"], {
    error: "must be one of user, assistant, system, developer",
  }),
  content,
});

const functionCallItem = z.looseObject({
  type: z.literal("function_call"),
  call_id: z.string(),
  name: functionName,
  arguments: z.string(),
});

const callOutputItem = (type: "function_call_output" | "custom_tool_call_output") =>
  z.looseObject({ type: z.literal(type), call_id: z.string(), output: toolOutput });

const customToolCallItem = z.looseObject({
  type: z.literal("custom_tool_call"),
  call_id: z.string(),
  name: functionName,
  input: z.string({ error: "must be a string" }),
});

export const functionTool = z.looseObject({
  type: z.literal("function"),
  name: functionName,
  description: z.string({ error: "must be a string" }).nullable().optional(),
  parameters: functionParameters.nullable().optional(),
  strict: z.boolean().nullable().optional(),
});

/** A freeform tool: the model writes its input as plain text (its grammar, if any, is not enforced here). */
export const customTool = z.looseObject({
  type: z.literal("custom"),
  name: functionName,
  description: z.string({ error: "must be a string" }).nullable().optional(),
});

const namespaceTool = z.looseObject({
  type: z.literal("namespace"),
  name: z.string({ error: "must be a string" }),
  tools: z.array(byType({ function: functionTool, custom: customTool })),
});

/** A tool: function, custom or namespace (its tools); any other type is a hosted tool, dropped when translating. */
export const tool = byType({ function: functionTool, custom: customTool, namespace: namespaceTool });

const additionalToolsItem = z.looseObject({ type: z.literal("additional_tools"), tools: z.array(tool) });

/** Items a model wrote that only the provider that wrote them can read back (reasoning), or hosted tools' calls. */
export const DROPPED_ITEM_TYPES = [
  "reasoning",
  "web_search_call",
  "file_search_call",
  "code_interpreter_call",
  "image_generation_call",
  "computer_call",
  "computer_call_output",
  "local_shell_call",
  "local_shell_call_output",
  "mcp_list_tools",
  "mcp_call",
  "mcp_approval_request",
  "mcp_approval_response",
  "compaction",
  "item_reference",
] as const;

const droppedItem = z.looseObject({ type: z.enum(DROPPED_ITEM_TYPES) });

/** An input item: a message (with or without `type`), a call or its output, the tools Codex adds, or a dropped one. */
export const inputItem = byType(
  {
    message: messageItem,
    function_call: functionCallItem,
    function_call_output: callOutputItem("function_call_output"),
    custom_tool_call: customToolCallItem,
    custom_tool_call_output: callOutputItem("custom_tool_call_output"),
    additional_tools: additionalToolsItem,
    ...Object.fromEntries(DROPPED_ITEM_TYPES.map((type) => [type, droppedItem])),
  },
  z.never({
    error:
      "must be a message ({role, content}), a function_call, custom_tool_call or their output, or an additional_tools item",
  }),
  "message",
);

export type FunctionTool = z.output<typeof functionTool>;
export type CustomTool = z.output<typeof customTool>;
export type ResponsesTool = FunctionTool | CustomTool | { type: "namespace"; name: string; tools: ResponsesTool[] };

type Output = { call_id: string; output: string | ContentPart[] };
/** An input item as validated (a hosted or dropped one by its type alone). */
export type InputItem =
  | (z.output<typeof messageItem> & { type?: "message" })
  | (z.output<typeof functionCallItem> & { type: "function_call" })
  | (Output & { type: "function_call_output" | "custom_tool_call_output" })
  | (z.output<typeof customToolCallItem> & { type: "custom_tool_call" })
  | { type: "additional_tools"; tools: ResponsesTool[] }
  | { type: (typeof DROPPED_ITEM_TYPES)[number] };
