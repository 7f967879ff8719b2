import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { randomUUID } from "node:crypto";
import { contentText, type CountableMessage } from "../../server/pricing/count-tokens";
import { DEV_VISION, devAnswer } from "./dev-answer";
import { splitIntoDeltas } from "./dev-completion";
import { ERROR_IN_200, failedAnswer, type DevFaults } from "./dev-faults";
import { readJson, sendJson } from "../lib/json-http-server";

/** How the development provider streams. */
export interface DevStreamOptions {
  /** Pause between streamed deltas, in ms. */
  deltaDelayMs?: number;
  /** Number of content deltas a streamed answer is split into. */
  streamDeltas?: number;
}

/**
 * What a chat call asked the provider for, and the headers it came with (routing tests look at both); `cancelled`
 * once the caller closed the request before its answer was complete.
 */
export interface ReceivedChatRequest {
  model: string;
  headers: IncomingHttpHeaders;
  cancelled: boolean;
  /** For a call of the Messages API (POST /v1/messages): its path and the body as it came. */
  messages?: { path: string; body: unknown };
}

/** A chat call's options: the stream's pace, the faults in force, and where the model ids asked for are noted. */
export interface DevChatOptions extends DevStreamOptions {
  faults: DevFaults;
  received?: ReceivedChatRequest[];
}

/** How late the hidden-reasoning fault reports its usage, after the last text. */
export const LATE_USAGE_MS = 300;

interface ChatBody {
  model?: unknown;
  messages?: unknown;
  max_tokens?: unknown;
  max_completion_tokens?: unknown;
  stream?: unknown;
  stream_options?: { include_usage?: unknown };
  tools?: unknown;
  tool_choice?: unknown;
}

/** POST /v1/chat/completions of the development provider. */
export async function devChatCompletion(request: IncomingMessage, response: ServerResponse, options: DevChatOptions) {
  let body: ChatBody;
  try {
    body = (await readJson(request)) as ChatBody;
  } catch {
    return sendJson(response, 400, { error: { message: "body must be JSON", type: "invalid_request_error" } });
  }
  if (typeof body.model !== "string" || !Array.isArray(body.messages) || body.messages.length === 0) {
    return sendJson(response, 400, {
      error: { message: "model and messages are required", type: "invalid_request_error" },
    });
  }
  const messages = body.messages as CountableMessage[];
  const lastUser = [...messages].reverse().find((message) => message.role === "user");
  if (options.received) {
    const received: ReceivedChatRequest = { model: body.model, headers: request.headers, cancelled: false };
    response.on("close", () => (received.cancelled ||= !response.writableFinished));
    options.received.push(received);
    // A development stack runs for days: keep the latest ids only.
    if (options.received.length > 1000) options.received.shift();
  }
  const fault = options.faults.in(contentText(lastUser?.content));
  if (fault === "error-in-200" && body.stream === true) return streamedErrorIn200(response);
  const failed = failedAnswer(fault);
  if (failed === "hang") return; // never answers; the caller's timeout must fire
  if (failed) return sendJson(response, failed.status, failed.body, failed.headers);
  const requestedMax = body.max_completion_tokens ?? body.max_tokens;
  const maxTokens = typeof requestedMax === "number" ? requestedMax : 4096;
  const answer = devAnswer({
    model: body.model,
    messages,
    tools: body.tools,
    toolChoice: body.tool_choice,
    maxTokens,
    fault,
    vision: DEV_VISION.openai,
  });
  const { toolCall, reasoningTokens, promptTokens, completionTokens } = answer;
  const completion = { text: answer.text, finishReason: answer.finishReason };
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: completionTokens,
    total_tokens: promptTokens + completionTokens,
    ...(reasoningTokens > 0 ? { completion_tokens_details: { reasoning_tokens: reasoningTokens } } : {}),
  };
  const id = `chatcmpl-${randomUUID().replace(/-/g, "")}`;
  const created = Math.floor(Date.now() / 1000);
  const toolCalls = toolCall
    ? [{ id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: toolCall.arguments } }]
    : undefined;

  if (body.stream !== true) {
    return sendJson(response, 200, {
      id,
      object: "chat.completion",
      created,
      model: body.model,
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: toolCall ? null : completion.text,
            ...(toolCalls ? { tool_calls: toolCalls } : {}),
          },
          finish_reason: completion.finishReason,
        },
      ],
      usage,
    });
  }

  response.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const includeUsage = body.stream_options?.include_usage === true;
  // As OpenAI's: with usage asked for, every chunk has a `usage` field, null but in the last one.
  const chunk = (choices: unknown[], extra: Record<string, unknown> = includeUsage ? { usage: null } : {}) =>
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model: body.model, choices, ...extra })}\n\n`;
  const delay = options.deltaDelayMs ?? 0;
  let closed = false;
  const clientGone = new Promise((resolve) => response.on("close", resolve)).then(() => (closed = true));

  response.write(
    chunk([{ index: 0, delta: { role: "assistant", content: toolCall ? null : "" }, finish_reason: null }]),
  );
  const deltas: Record<string, unknown>[] = toolCall
    ? [
        {
          tool_calls: [
            { index: 0, id: toolCall.id, type: "function", function: { name: toolCall.name, arguments: "" } },
          ],
        },
        ...splitIntoDeltas(toolCall.arguments, 3).map((part) => ({
          tool_calls: [{ index: 0, function: { arguments: part } }],
        })),
      ]
    : splitIntoDeltas(completion.text, options.streamDeltas ?? 8).map((content) => ({ content }));
  for (const [index, delta] of deltas.entries()) {
    // Even without a delay, yield so each event leaves in its own write, as a real provider's do.
    await new Promise((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)));
    if (closed) return;
    if (fault === "break-mid-stream" && index === Math.floor(deltas.length / 2)) {
      response.destroy();
      return;
    }
    if (fault === "stall-mid-stream" && index === Math.floor(deltas.length / 2)) {
      await clientGone;
      return;
    }
    response.write(chunk([{ index: 0, delta, finish_reason: null }]));
  }
  response.write(chunk([{ index: 0, delta: {}, finish_reason: completion.finishReason }]));
  if (fault === "hidden-reasoning") await new Promise((resolve) => setTimeout(resolve, LATE_USAGE_MS));
  if (closed) return;
  if (includeUsage && fault !== "no-usage") response.write(chunk([], { usage }));
  response.end("data: [DONE]\n\n");
}

/** A stream that fails with status 200: its first event, after a keep-alive comment, is an error object. */
function streamedErrorIn200(response: ServerResponse): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  response.write(": PROCESSING\n\n");
  response.end(`data: ${JSON.stringify(ERROR_IN_200)}\n\n`);
}
