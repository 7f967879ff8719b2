import { NOT_FORWARDED_FIELDS } from "./messages-fields";
import { isCustomTool, type ContentBlockParam, type ParsedMessagesRequest } from "./messages-request";

/**
 * Tools Anthropic defines that the caller runs (its bash, text editor, computer, memory): they cost tokens only, so
 * a native route is sent them. Every other typed tool runs at the provider (web search, web fetch, code execution,
 * tool search...), some billed per use or per container hour, which the price does not cover: they are not sent.
 */
const CLIENT_TOOL_TYPE = /^(bash|text_editor|computer|memory)_/;

/** Removes `cache_control` from an object and its nested blocks (a copy; the parsed body stays as it was). */
function withoutCacheControl(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutCacheControl);
  if (typeof value !== "object" || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [field, inner] of Object.entries(value)) {
    if (field !== "cache_control") copy[field] = withoutCacheControl(inner);
  }
  return copy;
}

type Block =
  | ContentBlockParam
  | Extract<NonNullable<Extract<ContentBlockParam, { type: "tool_result" }>["content"]>, unknown[]>[number];

/**
 * A content block with the fields its type has (cache hints left out): what the quote counted, nothing smuggled
 * beside it in a field the translation would not read.
 */
function knownFields(block: Block): Record<string, unknown> {
  switch (block.type) {
    case "text":
      return { type: "text", text: block.text };
    case "image": {
      const { source } = block;
      return {
        type: "image",
        source:
          source.type === "base64"
            ? { type: "base64", media_type: source.media_type, data: source.data }
            : { type: "url", url: source.url },
      };
    }
    case "tool_use":
      return { type: "tool_use", id: block.id, name: block.name, input: block.input };
    case "tool_result":
      return {
        type: "tool_result",
        tool_use_id: block.tool_use_id,
        ...(block.content === undefined
          ? {}
          : { content: typeof block.content === "string" ? block.content : block.content.map(knownFields) }),
        ...(block.is_error === undefined ? {} : { is_error: block.is_error }),
      };
    case "thinking":
      return { type: "thinking", thinking: block.thinking, signature: block.signature };
    case "redacted_thinking":
      return { type: "redacted_thinking", data: block.data };
  }
}

/**
 * The body a route that speaks Messages natively is sent: the caller's request as it came (the dropped fields of
 * messages-fields.ts included: the provider honours them; not those of NOT_FORWARDED_FIELDS), with the route's model
 * id, the priced output cap, only the tools that cost tokens alone, each content block with its type's fields alone
 * (knownFields), and no prompt-cache hints: a cache write is billed above the input rate the
 * quote priced, so input goes uncached, as quoted. Input is the same texts either way, so the count stands.
 */
export function nativeRequestBody(parsed: ParsedMessagesRequest, providerModel: string): Record<string, unknown> {
  // The messages are rebuilt block by block below: the copy that leaves out cache hints is of the rest alone.
  const { messages, ...rest } = parsed.body;
  const body = withoutCacheControl(rest) as Record<string, unknown>;
  for (const field of NOT_FORWARDED_FIELDS) delete body[field];
  body.messages = messages.map((turn) => ({
    role: turn.role,
    content: typeof turn.content === "string" ? turn.content : turn.content.map(knownFields),
  }));
  if (Array.isArray(parsed.body.system)) body.system = parsed.body.system.map(knownFields);
  body.model = providerModel;
  body.max_tokens = parsed.maxOutputTokens;
  if (parsed.body.tools !== undefined) {
    const tools = parsed.body.tools.filter((tool) => isCustomTool(tool) || CLIENT_TOOL_TYPE.test(tool.type));
    body.tools = withoutCacheControl(tools);
    const choice = parsed.body.tool_choice;
    if (tools.length === 0) {
      delete body.tools;
      if (choice?.type !== "none") delete body.tool_choice;
    } else if (choice?.type === "tool" && !tools.some((tool) => tool.name === choice.name)) {
      body.tool_choice = { type: "auto" };
    }
  }
  return body;
}
