import type { IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { contentText } from "../../server/pricing/count-tokens";
import { messagesRequestSchema } from "../../server/messages/messages-request";
import { toChatMessages, toChatToolChoice, toChatTools } from "../../server/messages/to-chat-request";
import { DEV_VISION, devAnswer, type DevAnswer } from "./dev-answer";
import { LATE_USAGE_MS, type DevChatOptions, type ReceivedChatRequest } from "./dev-chat";
import { splitIntoDeltas } from "./dev-completion";
import { failedAnswer } from "./dev-faults";
import { readJson, sendJson } from "../lib/json-http-server";

/** Anthropic's error body. */
const anthropicError = (type: string, message: string) => ({ type: "error", error: { type, message } });

const STOP_REASON = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" } as const;

/** The message's content blocks: the text, or the tool call as a tool_use block. */
function contentBlocks(answer: DevAnswer): Record<string, unknown>[] {
  if (!answer.toolCall) return [{ type: "text", text: answer.text }];
  const { id, name, arguments: args } = answer.toolCall;
  return [{ type: "tool_use", id: id.replace(/^call_/, "toolu_"), name, input: JSON.parse(args) as unknown }];
}

/**
 * POST /v1/messages of the development provider: Anthropic's Messages API spoken natively, whole and streamed, with
 * the answers its chat gives (the same text, tool calls when tools ask for them, the usage counted as the gateway's
 * quote counts the translated chat). Faults as the chat's: dev-faults.ts.
 */
export async function devMessages(request: IncomingMessage, response: ServerResponse, options: DevChatOptions) {
  let raw: unknown;
  try {
    raw = await readJson(request);
  } catch {
    return sendJson(response, 400, anthropicError("invalid_request_error", "body must be JSON"));
  }
  const parsed = messagesRequestSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const message = `${issue?.path.join(".") ?? "body"}: ${issue?.message ?? "invalid"}`;
    return sendJson(response, 400, anthropicError("invalid_request_error", message));
  }
  const body = parsed.data;
  if (options.received) {
    const received: ReceivedChatRequest = {
      model: body.model,
      headers: request.headers,
      cancelled: false,
      messages: { path: request.url ?? "", body: raw },
    };
    response.on("close", () => (received.cancelled ||= !response.writableFinished));
    options.received.push(received);
    if (options.received.length > 1000) options.received.shift();
  }
  const messages = toChatMessages(body);
  const lastUser = [...messages].reverse().find((message) => message.role === "user");
  const fault = options.faults.in(contentText(lastUser?.content));
  const failed = failedAnswer(fault);
  if (failed === "hang") return;
  if (failed && failed.status !== 200) {
    const type = failed.status === 429 ? "rate_limit_error" : "api_error";
    return sendJson(
      response,
      failed.status,
      anthropicError(type, `development provider fault: ${fault}`),
      failed.headers,
    );
  }
  if (failed && body.stream !== true) {
    return sendJson(response, 200, anthropicError("api_error", "development provider fault: error-in-200"));
  }
  const tools = toChatTools(body.tools);
  const answer = devAnswer({
    model: body.model,
    messages,
    tools: tools.length > 0 ? tools : undefined,
    toolChoice: body.tool_choice && tools.length > 0 ? toChatToolChoice(body.tool_choice) : undefined,
    maxTokens: body.max_tokens,
    fault,
    vision: DEV_VISION.anthropic,
  });
  const message = {
    id: `msg_${randomUUID().replace(/-/g, "")}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content: contentBlocks(answer),
    stop_reason: STOP_REASON[answer.finishReason],
    stop_sequence: null,
    usage: { input_tokens: answer.promptTokens, output_tokens: answer.completionTokens },
  };
  if (body.stream !== true) return sendJson(response, 200, message);
  await streamMessage(response, message, answer, { ...options, fault, errorIn200: failed !== undefined });
}

/** Writes `message` as Anthropic's event stream, its text or tool arguments in several deltas. */
async function streamMessage(
  response: ServerResponse,
  message: { usage: { input_tokens: number; output_tokens: number }; stop_reason: string } & Record<string, unknown>,
  answer: DevAnswer,
  options: DevChatOptions & { fault: string; errorIn200: boolean },
) {
  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = (data: Record<string, unknown>) =>
    response.write(`event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`);
  if (options.errorIn200) {
    response.write(": PROCESSING\n\n");
    send(anthropicError("api_error", "development provider fault: error-in-200"));
    return response.end();
  }
  let closed = false;
  const clientGone = new Promise((resolve) => response.on("close", resolve)).then(() => (closed = true));
  const { usage, stop_reason, content, ...rest } = message;
  send({
    type: "message_start",
    message: { ...rest, content: [], stop_reason: null, usage: { input_tokens: usage.input_tokens, output_tokens: 1 } },
  });
  send({ type: "ping" });
  const block = (content as Record<string, unknown>[])[0]!;
  const deltas = answer.toolCall
    ? splitIntoDeltas(answer.toolCall.arguments, 3).map((partial_json) => ({ type: "input_json_delta", partial_json }))
    : splitIntoDeltas(answer.text, options.streamDeltas ?? 8).map((text) => ({ type: "text_delta", text }));
  send({
    type: "content_block_start",
    index: 0,
    content_block: answer.toolCall ? { ...block, input: {} } : { type: "text", text: "" },
  });
  const delay = options.deltaDelayMs ?? 0;
  for (const [index, delta] of deltas.entries()) {
    await new Promise((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)));
    if (closed) return;
    if (options.fault === "break-mid-stream" && index === Math.floor(deltas.length / 2)) return response.destroy();
    if (options.fault === "stall-mid-stream" && index === Math.floor(deltas.length / 2)) return void (await clientGone);
    send({ type: "content_block_delta", index: 0, delta });
  }
  send({ type: "content_block_stop", index: 0 });
  if (options.fault === "hidden-reasoning") await new Promise((resolve) => setTimeout(resolve, LATE_USAGE_MS));
  if (closed) return;
  const finalUsage = options.fault === "no-usage" ? {} : { usage: { output_tokens: usage.output_tokens } };
  send({ type: "message_delta", delta: { stop_reason, stop_sequence: null }, ...finalUsage });
  send({ type: "message_stop" });
  response.end();
}
