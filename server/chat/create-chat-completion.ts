import type { AppContext } from "../app-context";
import { readJsonBody } from "../http/read-json-body";
import type { OutputTokenReader } from "../prepaid/run-prepaid-completion";
import { chatCompletionAnswer } from "./chat-answer";
import { parseChatRequest, withOutputCap } from "./chat-request";
import { completionTokens, isUsageOnlyChunk, streamedCompletionTokens, streamedOutputText } from "./chat-usage";
import { runPaidCompletion } from "./run-paid-completion";
import { type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/** Endpoints 1 and 2: a chat completion, paid with x402 or billed to a prepaid key, streamed when asked. */
export async function createChatCompletion(context: AppContext, request: ApiRequest): Promise<ApiAnswer> {
  const started = performance.now();
  const body = await readJsonBody(request);
  const parsed = parseChatRequest(body.value);
  const clientWantsUsage = parsed.body.stream_options?.include_usage === true;
  const outputTokens: OutputTokenReader = {
    json: completionTokens,
    streamEvent: streamedCompletionTokens,
    streamText: streamedOutputText,
    hideEvent: clientWantsUsage ? undefined : isUsageOnlyChunk,
  };

  return runPaidCompletion(context, request, {
    body,
    started,
    model: parsed.model,
    messages: parsed.body.messages,
    tools: parsed.body.tools,
    maxOutputTokens: parsed.maxOutputTokens,
    description: `Chat completion with ${parsed.model.id}`,
    outputTokens,
    work: async (maxOutputTokens, billing) => {
      const upstreamBody = withOutputCap(parsed.body, maxOutputTokens);
      if (parsed.body.stream !== true) {
        return {
          kind: "json",
          body: chatCompletionAnswer(await context.upstream.postJson("/chat/completions", upstreamBody)),
        };
      }
      // A prepaid call is billed on the usage the upstream reports, so it is always asked for.
      if (billing === "prepaid") upstreamBody.stream_options = { ...parsed.body.stream_options, include_usage: true };
      return { kind: "stream", stream: await context.upstream.startStream("/chat/completions", upstreamBody) };
    },
  });
}
