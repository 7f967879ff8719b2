import type { AppContext } from "../app-context";
import { readJsonBody } from "../http/read-json-body";
import { parseChatRequest } from "./chat-request";
import { runPaidCompletion } from "./run-paid-completion";

/** Endpoints 1 and 2: a chat completion, paid per request with x402, streamed when asked. */
export async function createChatCompletion(context: AppContext, request: Request): Promise<Response> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const parsed = parseChatRequest(body.value);
  // The upstream must never produce more than was paid for, so the priced output cap is always sent.
  const upstreamBody =
    parsed.body.max_completion_tokens !== undefined
      ? parsed.body
      : { ...parsed.body, max_tokens: parsed.maxOutputTokens };

  return runPaidCompletion(context, request, {
    body,
    started,
    model: parsed.model,
    messages: parsed.body.messages,
    tools: parsed.body.tools,
    maxOutputTokens: parsed.maxOutputTokens,
    description: `Chat completion with ${parsed.model.id}`,
    work: async () =>
      parsed.body.stream === true
        ? { kind: "stream", stream: await context.upstream.startStream("/chat/completions", upstreamBody) }
        : { kind: "json", body: await context.upstream.postJson("/chat/completions", upstreamBody) },
  });
}
