import type { AppContext } from "../app-context";
import { runPaidCompletion } from "../chat/run-paid-completion";
import { readJsonBody } from "../http/read-json-body";
import { fromChatCompletion } from "./response-object";
import { parseResponsesRequest } from "./responses-request";
import { translateToResponsesStream } from "./responses-stream";
import { toChatRequest } from "./to-chat-request";

/** Endpoints 3 and 4 (alpha): a Response, paid per request, translated to and from a chat completion. */
export async function createResponse(context: AppContext, request: Request): Promise<Response> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const parsed = parseResponsesRequest(body.value);
  const chatRequest = toChatRequest(parsed);

  return runPaidCompletion(context, request, {
    body,
    started,
    model: parsed.model,
    messages: chatRequest.messages as { role: string; content: string | null }[],
    tools: chatRequest.tools,
    maxOutputTokens: parsed.maxOutputTokens,
    description: `Response (alpha) with ${parsed.model.id}`,
    work: async () => {
      if (parsed.body.stream) {
        const upstream = await context.upstream.startStream("/chat/completions", chatRequest);
        return {
          kind: "stream",
          stream: { body: upstream.body.pipeThrough(translateToResponsesStream(parsed)), cancel: upstream.cancel },
        };
      }
      const completion = await context.upstream.postJson("/chat/completions", chatRequest);
      return { kind: "json", body: fromChatCompletion(parsed, completion) };
    },
  });
}
