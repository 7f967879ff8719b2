import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { contentText, countTextTokens } from "../../server/pricing/count-tokens";
import type { ResponsesRequest } from "../../server/responses/responses-request";
import { toChatMessages, toChatTools, toolsOf } from "../../server/responses/to-chat-request";
import { DEV_VISION, devPromptTokens } from "./dev-answer";
import { devCompletion, splitIntoDeltas } from "./dev-completion";
import type { DevChatOptions } from "./dev-chat";
import { failedAnswer } from "./dev-faults";
import { devToolCall } from "./dev-tool-call";
import { readJson, sendJson } from "../lib/json-http-server";

/** What a Responses call asked the provider for: the body as it arrived (tests of pass-through read it). */
export interface ReceivedResponsesRequest {
  body: Record<string, unknown>;
  headers: IncomingHttpHeaders;
}

type Json = Record<string, unknown>;

/**
 * POST /v1/responses of the development provider: OpenAI's Responses API spoken natively, with the chat endpoint's
 * answers (the same text for the same input, tool calls when a tool is named) and its usage counted as the chat
 * translation of the request counts (so a gateway's own count agrees); whole, or streamed as OpenAI's events.
 */
export async function devResponses(
  request: IncomingMessage,
  response: ServerResponse,
  options: DevChatOptions & { receivedResponses?: ReceivedResponsesRequest[] },
) {
  let body: Json;
  try {
    body = (await readJson(request)) as Json;
  } catch {
    return sendJson(response, 400, { error: { message: "body must be JSON", type: "invalid_request_error" } });
  }
  if (typeof body.model !== "string" || body.input === undefined) {
    return sendJson(response, 400, {
      error: { message: "model and input are required", type: "invalid_request_error" },
    });
  }
  if (options.receivedResponses) {
    options.receivedResponses.push({ body, headers: request.headers });
    if (options.receivedResponses.length > 1000) options.receivedResponses.shift();
  }
  const asRequest = body as unknown as ResponsesRequest;
  const messages = toChatMessages(asRequest);
  const offered = toolsOf(asRequest);
  const tools = offered.length > 0 ? toChatTools(offered) : undefined;
  const lastUser = [...messages].reverse().find((message) => message.role === "user");
  const fault = options.faults.in(contentText(lastUser?.content));
  const failed = failedAnswer(fault);
  if (failed === "hang") return;
  if (failed) return sendJson(response, failed.status, failed.body, failed.headers);
  const maxTokens = typeof body.max_output_tokens === "number" ? body.max_output_tokens : 4096;
  const choice = typeof body.tool_choice === "object" && body.tool_choice !== null ? body.tool_choice : undefined;
  const toolChoice = choice ? { function: { name: (choice as Json).name } } : body.tool_choice;
  const toolCall = devToolCall(messages, tools, toolChoice);
  const completion = toolCall
    ? { text: "", completionTokens: countTextTokens(toolCall.name) + countTextTokens(toolCall.arguments) }
    : devCompletion(body.model, messages, maxTokens);
  const inputTokens = devPromptTokens(messages, tools, DEV_VISION.openai, fault);
  const usage = {
    input_tokens: inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: completion.completionTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: inputTokens + completion.completionTokens,
  };
  const truncated = !toolCall && "finishReason" in completion && completion.finishReason === "length";
  const isCustom = toolCall && offered.find((tool) => tool.name === toolCall.name)?.type === "custom";
  const item: Json = toolCall
    ? isCustom
      ? {
          id: `ctc_${toolCall.id}`,
          type: "custom_tool_call",
          status: "completed",
          call_id: toolCall.id,
          name: toolCall.name,
          input: toolCall.arguments,
        }
      : {
          id: `fc_${toolCall.id}`,
          type: "function_call",
          status: "completed",
          call_id: toolCall.id,
          name: toolCall.name,
          arguments: toolCall.arguments,
        }
    : {
        id: `msg_${randomUUID().replace(/-/g, "")}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: completion.text, annotations: [] }],
      };
  const responseObject = (status: string, output: Json[], withUsage: boolean): Json => ({
    id: responseId,
    object: "response",
    created_at: created,
    status,
    error: null,
    incomplete_details: truncated && status !== "in_progress" ? { reason: "max_output_tokens" } : null,
    model: body.model,
    output,
    usage: withUsage ? usage : null,
    max_output_tokens: body.max_output_tokens ?? null,
  });
  const responseId = `resp_${randomUUID().replace(/-/g, "")}`;
  const created = Math.floor(Date.now() / 1000);
  const finalStatus = truncated ? "incomplete" : "completed";
  if (body.stream !== true) return sendJson(response, 200, responseObject(finalStatus, [item], true));

  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  let sequence = 0;
  const events: Json[] = [
    { type: "response.created", response: responseObject("in_progress", [], false) },
    { type: "response.in_progress", response: responseObject("in_progress", [], false) },
  ];
  const text = (item.content as { text: string }[] | undefined)?.[0]?.text;
  if (text === undefined) {
    events.push({ type: "response.output_item.added", output_index: 0, item: { ...item, status: "in_progress" } });
    const input = String(item.arguments ?? item.input);
    const kind = item.type === "function_call" ? "function_call_arguments" : "custom_tool_call_input";
    for (const delta of splitIntoDeltas(input, 3))
      events.push({ type: `response.${kind}.delta`, item_id: item.id, output_index: 0, delta });
    events.push({
      type: `response.${kind}.done`,
      item_id: item.id,
      output_index: 0,
      ...(item.type === "function_call" ? { arguments: input } : { input }),
    });
  } else {
    const at = { item_id: item.id, output_index: 0, content_index: 0 };
    events.push({
      type: "response.output_item.added",
      output_index: 0,
      item: { ...item, status: "in_progress", content: [] },
    });
    events.push({
      type: "response.content_part.added",
      ...at,
      part: { type: "output_text", text: "", annotations: [] },
    });
    for (const delta of splitIntoDeltas(text, options.streamDeltas ?? 8))
      events.push({ type: "response.output_text.delta", ...at, delta });
    events.push({ type: "response.output_text.done", ...at, text });
    events.push({ type: "response.content_part.done", ...at, part: (item.content as Json[])[0] });
  }
  events.push({ type: "response.output_item.done", output_index: 0, item });
  events.push({ type: `response.${finalStatus}`, response: responseObject(finalStatus, [item], true) });
  let closed = false;
  response.on("close", () => (closed = true));
  const delay = options.deltaDelayMs ?? 0;
  for (const event of events) {
    await new Promise((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)));
    if (closed) return;
    response.write(
      `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence++ })}\n\n`,
    );
  }
  response.end();
}
