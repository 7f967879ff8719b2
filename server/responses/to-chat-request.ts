import type { ChatMessage, ChatRequestBody, ChatTool } from "../chat/chat-wire";
import type { ParsedResponsesRequest, ResponsesRequest } from "./responses-request";

type InputItem = Exclude<ResponsesRequest["input"], string>[number];

function text(content: string | { text: string }[]): string {
  return typeof content === "string" ? content : content.map((part) => part.text).join("");
}

/** Responses input as chat messages: instructions first as a system message, function calls as tool calls. */
export function toChatMessages(body: ResponsesRequest): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions) messages.push({ role: "system", content: body.instructions });
  if (typeof body.input === "string") return [...messages, { role: "user", content: body.input }];
  for (const item of body.input as InputItem[]) {
    if (item.type === "function_call") {
      const call = {
        id: item.call_id,
        type: "function" as const,
        function: { name: item.name, arguments: item.arguments },
      };
      const previous = messages.at(-1);
      // Consecutive calls belong to one assistant turn, as chat expects.
      if (previous?.role === "assistant" && previous.tool_calls) previous.tool_calls.push(call);
      else messages.push({ role: "assistant", content: null, tool_calls: [call] });
    } else if (item.type === "function_call_output") {
      messages.push({ role: "tool", tool_call_id: item.call_id, content: item.output });
    } else {
      messages.push({ role: item.role, content: text(item.content) });
    }
  }
  return messages;
}

/** The chat completion request a Responses request is translated to. */
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
  if (body.tools?.length) {
    chat.tools = toChatTools(body.tools);
    if (body.parallel_tool_calls !== undefined && body.parallel_tool_calls !== null) {
      chat.parallel_tool_calls = body.parallel_tool_calls;
    }
  }
  if (body.tool_choice !== undefined) {
    chat.tool_choice =
      typeof body.tool_choice === "string"
        ? body.tool_choice
        : { type: "function", function: { name: body.tool_choice.name } };
  }
  if (body.stream) {
    chat.stream = true;
    // Usage is needed for response.completed (and asked for by every canonical stream).
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

export function toChatTools(tools: NonNullable<ResponsesRequest["tools"]>): ChatTool[] {
  return tools.map((tool) => ({
    type: "function" as const,
    function: {
      name: tool.name,
      ...(tool.description !== undefined ? { description: tool.description } : {}),
      ...(tool.parameters ? { parameters: tool.parameters } : {}),
      ...(tool.strict !== undefined && tool.strict !== null ? { strict: tool.strict } : {}),
    },
  }));
}
