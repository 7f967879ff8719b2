import { chatLimits } from "../../config/limits";
import { DROPPED_ITEM_TYPES, inputItem } from "./responses-items";

/**
 * A quick check of a Responses body, run before its zod schema (responses-request.ts): plain code for the shapes
 * clients send, which passes only bodies the schema passes. In the app server the schema took 0.3 to 0.5 ms of CPU
 * per Codex-shaped call (its parsers are shared by every schema in the process, so they run slowly there); this
 * takes a few microseconds. What it does not pass, valid or not, goes to the schema, which alone words the 400s.
 *
 * The schema transforms no value, but it writes its objects' keys in its own order, which the answer shows for the
 * two fields a Response echoes: `tools` and `tool_choice`. The quick check leaves those to the schema's own field
 * parsers (the caller keeps their output); an item of `additional_tools` (not echoed) is checked by the item schema.
 */

type Json = Record<string, unknown>;

const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const absent = (value: unknown) => value === undefined || value === null;
const optionalString = (value: unknown) => absent(value) || typeof value === "string";
const optionalBoolean = (value: unknown) => absent(value) || typeof value === "boolean";
const optionalNumberIn = (value: unknown, min: number, max: number) =>
  absent(value) || (typeof value === "number" && value >= min && value <= max);
const oneOf = (value: unknown, allowed: readonly string[]) => typeof value === "string" && allowed.includes(value);
const optionalOneOf = (value: unknown, allowed: readonly string[]) => absent(value) || oneOf(value, allowed);

/** The function name rule of chat-fields.ts. */
const FUNCTION_NAME = /^[\w-]{1,64}$/;
const isFunctionName = (value: unknown) => typeof value === "string" && FUNCTION_NAME.test(value);

const ROLES = ["user", "assistant", "system", "developer"];
const TEXT_PART_TYPES = ["input_text", "output_text"];
const DROPPED: readonly string[] = DROPPED_ITEM_TYPES;

/** The top-level fields the quick check knows, each with its rule (tools and tool_choice: the schema's). */
const FIELD_RULES: Record<string, (value: unknown) => boolean> = {
  model: (value) => typeof value === "string",
  input: (value) =>
    (typeof value === "string" && value.length > 0) ||
    (Array.isArray(value) && value.length > 0 && value.every(itemPasses)),
  instructions: optionalString,
  max_output_tokens: (value) =>
    absent(value) ||
    (Number.isSafeInteger(value) && (value as number) >= 1 && (value as number) <= chatLimits.maxOutputTokens),
  stream: optionalBoolean,
  temperature: (value) => optionalNumberIn(value, 0, 2),
  top_p: (value) => optionalNumberIn(value, 0, 1),
  parallel_tool_calls: optionalBoolean,
  metadata: (value) => absent(value) || (isObject(value) && Object.values(value).every((v) => typeof v === "string")),
  user: optionalString,
  reasoning: (value) =>
    absent(value) ||
    (isObject(value) &&
      optionalOneOf(value.effort, ["none", "minimal", "low", "medium", "high", "xhigh"]) &&
      optionalString(value.summary)),
  text: (value) =>
    absent(value) ||
    (isObject(value) &&
      (absent(value.format) ||
        (isObject(value.format) && oneOf(value.format.type, ["text", "json_object", "json_schema"]))) &&
      optionalOneOf(value.verbosity, ["low", "medium", "high"])),
  include: (value) => absent(value) || (Array.isArray(value) && value.every((entry) => typeof entry === "string")),
  store: optionalBoolean,
  truncation: (value) => optionalOneOf(value, ["auto", "disabled"]),
  prompt_cache_key: optionalString,
  prompt_cache_retention: optionalString,
  safety_identifier: optionalString,
  client_metadata: (value) => absent(value) || isObject(value),
};

/** The fields the schema checks that the quick check leaves to it. */
export const SCHEMA_CHECKED_FIELDS = ["tools", "tool_choice"] as const;

/** An input item the item schema passes, by its type (a message when untyped). */
function itemPasses(item: unknown): boolean {
  if (!isObject(item)) return false;
  const { type } = item;
  if (type === undefined || type === "message") {
    return (
      oneOf(item.role, ROLES) &&
      (typeof item.content === "string" || (Array.isArray(item.content) && item.content.every(textPartPasses)))
    );
  }
  switch (type) {
    case "function_call":
      return typeof item.call_id === "string" && isFunctionName(item.name) && typeof item.arguments === "string";
    case "custom_tool_call":
      return typeof item.call_id === "string" && isFunctionName(item.name) && typeof item.input === "string";
    case "function_call_output":
    case "custom_tool_call_output":
      return (
        typeof item.call_id === "string" &&
        (typeof item.output === "string" || (Array.isArray(item.output) && item.output.every(outputPartPasses)))
      );
    case "additional_tools":
      return inputItem.safeParse(item).success;
    default:
      return typeof type === "string" && DROPPED.includes(type);
  }
}

const textPartPasses = (part: unknown) =>
  isObject(part) && oneOf(part.type, TEXT_PART_TYPES) && typeof part.text === "string";

/** A tool output's part: text, as a message's (an image or anything else goes to the schema). */
const outputPartPasses = textPartPasses;

/**
 * Whether the schema surely passes the body, but for `tools` and `tool_choice` (SCHEMA_CHECKED_FIELDS), which the
 * caller parses with the schema's own field parsers; false says nothing (the schema decides).
 */
export function quickCheckPasses(body: Json): boolean {
  for (const field in body) {
    const rule = FIELD_RULES[field];
    if (rule) {
      if (!rule(body[field])) return false;
    } else if (!(SCHEMA_CHECKED_FIELDS as readonly string[]).includes(field)) {
      return false;
    }
  }
  return typeof body.model === "string" && body.input !== undefined;
}
