import type { ChatContentPart, ChatMessage, ChatRequestBody, ChatTool } from "../chat/chat-wire";
import { chatImagePart, imageFrom } from "../vision/image-parts";
import type { ContentPart, CustomTool, FunctionTool, ResponsesTool } from "./responses-items";
import type { ParsedResponsesRequest, ResponsesRequest } from "./responses-request";

/** An image part as a chat image part, naming its place (`param`) for a refusal. */
const imageOf = (part: Extract<ContentPart, { type: "input_image" }>, param: string) =>
  imageFrom(chatImagePart(part.image_url, part.detail), `${param}.image_url`);

/** Content's text parts joined; its images, as chat image parts, into `images`. */
function split(content: string | ContentPart[], param: string, images: ChatContentPart[]): string {
  if (typeof content === "string") return content;
  let text = "";
  content.forEach((part, index) => {
    if (part.type === "input_image") images.push(imageOf(part, `${param}[${index}]`));
    else text += part.text;
  });
  return text;
}

/** A message's content: text alone as one string (what every chat provider takes); with images, chat parts. */
function messageContent(content: string | ContentPart[], param: string): string | ChatContentPart[] {
  if (typeof content === "string") return content;
  if (!content.some((part) => part.type === "input_image")) return split(content, param, []);
  return content.map((part, index) =>
    part.type === "input_image" ? imageOf(part, `${param}[${index}]`) : { type: "text", text: part.text },
  );
}

/** A custom (freeform) tool's call as a chat function call: its input is the one string argument `input`. */
export function customArguments(input: string): string {
  return JSON.stringify({ input });
}

/** Responses input as chat messages: instructions first as a system message, calls as tool calls. */
export function toChatMessages(body: ResponsesRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: "system", content: body.instructions });
  if (typeof body.input === "string") return [...messages, { role: "user", content: body.input }];
  const call = (id: string, name: string, args: string) => {
    const toolCall = { id, type: "function" as const, function: { name, arguments: args } };
    const previous = messages.at(-1);
    // Consecutive calls belong to one assistant turn, as chat expects.
    if (previous?.role === "assistant" && previous.tool_calls) previous.tool_calls.push(toolCall);
    else messages.push({ role: "assistant", content: null, tool_calls: [toolCall] });
  };
  // Images of tool outputs go to a user message after the outputs, as chat takes no image in a tool message.
  let outputImages: ChatContentPart[] = [];
  const flushImages = () => {
    if (outputImages.length > 0) messages.push({ role: "user", content: outputImages });
    outputImages = [];
  };
  body.input.forEach((item, index) => {
    const isOutput = item.type === "function_call_output" || item.type === "custom_tool_call_output";
    if (!isOutput) flushImages();
    if (item.type === "function_call") call(item.call_id, item.name, item.arguments);
    else if (item.type === "custom_tool_call") call(item.call_id, item.name, customArguments(item.input));
    else if (item.type === "function_call_output" || item.type === "custom_tool_call_output") {
      const content = split(item.output, `input[${index}].output`, outputImages);
      messages.push({ role: "tool", tool_call_id: item.call_id, content });
    } else if (item.type === undefined || item.type === "message") {
      messages.push({ role: item.role, content: messageContent(item.content, `input[${index}].content`) });
    }
    // additional_tools items add tools (toolsOf); reasoning and hosted tools' items are dropped.
  });
  flushImages();
  return messages;
}

/** Every function and custom tool of the request, namespaces flattened; hosted tools (web_search...) dropped. */
export function toolsOf(body: ResponsesRequest): (FunctionTool | CustomTool)[] {
  const tools: (FunctionTool | CustomTool)[] = [];
  const seen = new Set<string>();
  const add = (list: readonly ResponsesTool[]) => {
    for (const tool of list) {
      if (tool.type === "namespace") add(tool.tools);
      else if ((tool.type === "function" || tool.type === "custom") && !seen.has(tool.name)) {
        seen.add(tool.name);
        tools.push(tool);
      }
    }
  };
  add(body.tools ?? []);
  if (typeof body.input !== "string") {
    for (const item of body.input) if (item.type === "additional_tools") add(item.tools);
  }
  return tools;
}

/** The names of the custom tools: a chat call of one is answered as a custom_tool_call. */
export function customToolNames(body: ResponsesRequest): Set<string> {
  return new Set(toolsOf(body).flatMap((tool) => (tool.type === "custom" ? [tool.name] : [])));
}

/** Structured output asked for in `text.format`, as chat's response_format; undefined for plain text. */
function responseFormat(format: Record<string, unknown> | null | undefined): unknown {
  if (format?.type === "json_object") return { type: "json_object" };
  if (format?.type !== "json_schema") return undefined;
  const { type: _type, ...schema } = format;
  return { type: "json_schema", json_schema: schema };
}

/**
 * The chat completion request a Responses request is translated to. What chat cannot be told is dropped:
 * reasoning (an OpenAI-compatible provider may refuse `reasoning_effort` for a model that does not reason),
 * verbosity, include, store, truncation, client_metadata, hosted tools and reasoning items.
 */
export function toChatRequest(parsed: ParsedResponsesRequest): ChatRequestBody {
  const { body } = parsed;
  const chat: ChatRequestBody = {
    model: body.model,
    messages: toChatMessages(body),
    max_tokens: parsed.maxOutputTokens,
  };
  if (body.temperature !== undefined && body.temperature !== null) chat.temperature = body.temperature;
  if (body.top_p !== undefined && body.top_p !== null) chat.top_p = body.top_p;
  if (body.user !== undefined) chat.user = body.user;
  if (typeof body.prompt_cache_key === "string") chat.prompt_cache_key = body.prompt_cache_key;
  const format = responseFormat(body.text?.format);
  if (format) chat.response_format = format;
  const tools = toolsOf(body);
  if (tools.length > 0) {
    chat.tools = toChatTools(tools);
    if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) {
      chat.parallel_tool_calls = body.parallel_tool_calls;
    }
    const choice = body.tool_choice;
    if (typeof choice === "string") chat.tool_choice = choice;
    else if (choice && (choice.type === "function" || choice.type === "custom") && typeof choice.name === "string") {
      chat.tool_choice = { type: "function", function: { name: choice.name } };
    }
  } else if (body.tool_choice === "none") chat.tool_choice = "none";
  if (body.stream) {
    chat.stream = true;
    // Usage is needed for response.completed (and asked for by every canonical stream).
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

const CUSTOM_INPUT = {
  type: "object",
  properties: { input: { type: "string", description: "The tool's input, as plain text" } },
  required: ["input"],
  additionalProperties: false,
};

export function toChatTools(tools: readonly (FunctionTool | CustomTool)[]): ChatTool[] {
  return tools.map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      ...(tool.description ? { description: tool.description } : {}),
      ...(tool.type === "custom"
        ? { parameters: CUSTOM_INPUT }
        : {
            ...(tool.parameters ? { parameters: tool.parameters } : {}),
            ...(tool.strict !== undefined && tool.strict !== null ? { strict: tool.strict } : {}),
          }),
    },
  }));
}
