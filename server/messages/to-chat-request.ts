import type { ChatContentPart, ChatMessage, ChatRequestBody, ChatTool } from "../chat/chat-wire";
import { chatImagePart, imageFrom } from "../vision/image-parts";
import {
  isCustomTool,
  type ContentBlockParam,
  type MessageParam,
  type MessagesRequest,
  type ParsedMessagesRequest,
} from "./messages-request";

/** A chat tool choice: auto, none, required, or one function. */
export type ChatToolChoice = "auto" | "none" | "required" | { type: "function"; function: { name: string } };

/** OpenAI's chat takes at most 4 stop sequences; the rest cannot be honoured, and are dropped. */
const MAX_CHAT_STOP_SEQUENCES = 4;

type ImageBlock = Extract<ContentBlockParam, { type: "image" }>;

/**
 * An image block as a chat image part: a base64 source becomes a data URL, a URL source stays one; `param` is the
 * block's place in the Messages request, which a refusal of the image names.
 */
export function imagePart(block: ImageBlock, param: string): ChatContentPart {
  const { source } = block;
  const url = source.type === "base64" ? `data:${source.media_type};base64,${source.data}` : source.url;
  return imageFrom(chatImagePart(url), `${param}.source`);
}

/** Text parts alone become one string (what every chat provider takes); with an image, the parts stay parts. */
function userContent(parts: ChatContentPart[]): string | ChatContentPart[] {
  if (parts.every((part) => part.type === "text")) return parts.map((part) => part.text).join("");
  return parts;
}

type ToolResultBlock = Extract<ContentBlockParam, { type: "tool_result" }>;

/** A tool result's text (its images go to the user message that follows); an error result says it is one. */
function toolResultText(block: ToolResultBlock, images: ChatContentPart[], param: string): string {
  let text: string;
  if (block.content === undefined) text = "";
  else if (typeof block.content === "string") text = block.content;
  else {
    text = "";
    block.content.forEach((part, index) => {
      if (part.type === "text") text += part.text;
      else images.push(imagePart(part, `${param}.content[${index}]`));
    });
  }
  return block.is_error ? `Error: ${text}` : text;
}

/**
 * A user turn: its tool results first, each a tool message (chat wants them right after the assistant's calls),
 * then its text and images as one user message, if it has any.
 */
function userMessages(content: Exclude<MessageParam["content"], string>, param: string): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: ChatContentPart[] = [];
  content.forEach((block, index) => {
    const at = `${param}.content[${index}]`;
    if (block.type === "tool_result") {
      tools.push({ role: "tool", tool_call_id: block.tool_use_id, content: toolResultText(block, parts, at) });
    } else if (block.type === "text") parts.push({ type: "text", text: block.text });
    else if (block.type === "image") parts.push(imagePart(block, at));
    // tool_use and thinking blocks in a user turn have no chat form: dropped.
  });
  return parts.length > 0 ? [...tools, { role: "user", content: userContent(parts) }] : tools;
}

/** An assistant turn: its text, and its tool_use blocks as tool calls; thinking passed back is dropped. */
function assistantMessage(content: Exclude<MessageParam["content"], string>): ChatMessage {
  let text = "";
  const calls: NonNullable<ChatMessage["tool_calls"]> = [];
  for (const block of content) {
    if (block.type === "text") text += block.text;
    else if (block.type === "tool_use") {
      calls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: JSON.stringify(block.input) },
      });
    }
  }
  if (calls.length === 0) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: calls };
}

/** The text blocks of a content array, joined (a system turn's: other blocks have no place there). */
function textOf(content: Exclude<MessageParam["content"], string>): string {
  return content.map((block) => (block.type === "text" ? block.text : "")).join("");
}

/**
 * The thinking passed back in assistant turns (its text, or a redacted block's data): a chat route is not sent it,
 * but a route that speaks Messages natively is, and its provider may bill it as input, so the quote counts it.
 */
export function thinkingTexts(body: MessagesRequest): string[] {
  const texts: string[] = [];
  for (const turn of body.messages) {
    if (typeof turn.content === "string") continue;
    for (const block of turn.content) {
      if (block.type === "thinking") texts.push(block.thinking);
      else if (block.type === "redacted_thinking") texts.push(block.data);
    }
  }
  return texts;
}

/** The system prompt and the turns of a Messages request as chat messages. */
export function toChatMessages(body: MessagesRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const system = typeof body.system === "string" ? body.system : body.system?.map((block) => block.text).join("\n\n");
  if (system) messages.push({ role: "system", content: system });
  body.messages.forEach((turn, index) => {
    if (typeof turn.content === "string") messages.push({ role: turn.role, content: turn.content });
    else if (turn.role === "system") messages.push({ role: "system", content: textOf(turn.content) });
    else if (turn.role === "assistant") messages.push(assistantMessage(turn.content));
    else messages.push(...userMessages(turn.content, `messages[${index}]`));
  });
  return messages;
}

/** The custom tools as chat functions; tools of other types (the provider's own, typed client tools) are dropped. */
export function toChatTools(tools: MessagesRequest["tools"]): ChatTool[] {
  return (tools ?? []).filter(isCustomTool).map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      parameters: tool.input_schema,
    },
  }));
}

/** auto, any (required), tool (that function), none. */
export function toChatToolChoice(choice: NonNullable<MessagesRequest["tool_choice"]>): ChatToolChoice {
  switch (choice.type) {
    case "auto":
      return "auto";
    case "any":
      return "required";
    case "none":
      return "none";
    case "tool":
      return { type: "function", function: { name: choice.name } };
  }
}

/** A chat request with what a Messages request translates to: `parallel_tool_calls` where the caller disabled it. */
export type TranslatedChatRequest = ChatRequestBody & { parallel_tool_calls?: false };

/**
 * The canonical chat request a Messages request is translated to; `model` is the one asked for (the caller puts
 * the route's provider id in). Dropped: top_k, thinking, thinking passed back, the provider's own tools, metadata
 * (Claude Code's user_id is a JSON of device and session ids, longer than chat's `user` is meant to be, and not the
 * chat provider's to know), and every field of DROPPED_FIELDS (messages-fields.ts).
 */
export function toChatRequest(parsed: ParsedMessagesRequest): TranslatedChatRequest {
  const { body } = parsed;
  const chat: TranslatedChatRequest = {
    model: body.model,
    messages: toChatMessages(body),
    max_tokens: parsed.maxOutputTokens,
  };
  if (body.temperature !== undefined) chat.temperature = body.temperature;
  if (body.top_p !== undefined) chat.top_p = body.top_p;
  if (body.stop_sequences?.length) chat.stop = body.stop_sequences.slice(0, MAX_CHAT_STOP_SEQUENCES);
  const tools = toChatTools(body.tools);
  // A tool choice without tools is an error to chat providers: with no custom tool, neither is sent.
  if (tools.length > 0) {
    chat.tools = tools;
    if (body.tool_choice) {
      chat.tool_choice = toChatToolChoice(body.tool_choice);
      if ("disable_parallel_tool_use" in body.tool_choice && body.tool_choice.disable_parallel_tool_use) {
        chat.parallel_tool_calls = false;
      }
    }
  }
  if (body.stream) {
    chat.stream = true;
    // Usage is needed for message_delta even when the caller could not ask for it.
    chat.stream_options = { include_usage: true };
  }
  return chat;
}
