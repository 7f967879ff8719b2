import type { AppContext } from "../app-context";
import { chatCompletionAnswer } from "../chat/chat-answer";
import { runPaidCompletion } from "../chat/run-paid-completion";
import { readJsonBody } from "../http/read-json-body";
import { parseEventJson } from "../http/sse-data-parser";
import { fromChatCompletion } from "./response-object";
import { parseResponsesRequest } from "./responses-request";
import { translateToResponsesStream } from "./responses-stream";
import { toChatRequest } from "./to-chat-request";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

function outputTokensOf(response: unknown): number | undefined {
  const tokens = (response as { usage?: { output_tokens?: unknown } } | null)?.usage?.output_tokens;
  return typeof tokens === "number" ? tokens : undefined;
}

/** The output text of a stream event: the `delta` of output text and function call arguments. */
function outputTextOf(data: string): string {
  if (!data.includes('.delta"')) return "";
  const event = parseEventJson(data) as { type?: unknown; delta?: unknown } | undefined;
  const counted =
    event?.type === "response.output_text.delta" || event?.type === "response.function_call_arguments.delta";
  return counted && typeof event.delta === "string" ? event.delta : "";
}

/**
 * Endpoints 3 and 4 (alpha): a Response, paid with x402 or billed to a prepaid key, translated to and from a
 * chat completion.
 */
export async function createResponse(context: AppContext, request: ApiRequest): Promise<ApiAnswer> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const parsed = parseResponsesRequest(body.value);
  const chatRequestBase = toChatRequest(parsed);

  return runPaidCompletion(context, request, {
    body,
    started,
    model: parsed.model,
    messages: chatRequestBase.messages as { role: string; content: string | null }[],
    tools: chatRequestBase.tools,
    maxOutputTokens: parsed.maxOutputTokens,
    description: `Response (alpha) with ${parsed.model.id}`,
    outputTokens: {
      json: outputTokensOf,
      streamEvent: (data) => {
        // Only the last event reports usage; the deltas before it are not parsed for it.
        if (!data.includes("response.completed")) return undefined;
        const event = parseEventJson(data) as { type?: string; response?: unknown } | undefined;
        return event?.type === "response.completed" ? outputTokensOf(event.response) : undefined;
      },
      streamText: outputTextOf,
    },
    work: async (maxOutputTokens) => {
      const chatRequest = { ...chatRequestBase, max_tokens: maxOutputTokens };
      if (parsed.body.stream) {
        const upstream = await context.upstream.startStream("/chat/completions", chatRequest);
        return {
          kind: "stream",
          stream: { body: upstream.body.pipeThrough(translateToResponsesStream(parsed)), cancel: upstream.cancel },
        };
      }
      const completion = chatCompletionAnswer(await context.upstream.postJson("/chat/completions", chatRequest));
      return { kind: "json", body: fromChatCompletion(parsed, completion) };
    },
  });
}
