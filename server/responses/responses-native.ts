import type { ChatCompletion, ChatToolCall, ChatToolCallDelta } from "../chat/chat-wire";
import { carryNative, type NativeApi } from "../dialects/dialect";
import { eachEvent, SseEvent, type EventStream } from "../http/event-stream";
import { providerRefusal, UpstreamError } from "../upstream/upstream-error";
import type { ResponsesCall } from "./responses-request";
import { isHostedTool } from "./hosted-tools";
import { nativeInput } from "./native-input";

type Json = Record<string, unknown>;
const isRecord = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The tools a native route is sent: hosted tools (billed per use, beyond the tokens priced) left out. */
function pricedTools(tools: unknown): unknown {
  if (!Array.isArray(tools)) return tools;
  return tools.filter((tool) => !isHostedTool(tool));
}

/**
 * The Responses API spoken natively by a route (its catalog `api` is "responses"): the request is passed on as it
 * came, its output capped at what is paid for (`max_output_tokens`), its hosted tools left out (they are billed per
 * use) and its input exactly what the quote counted (native-input.ts); the answer, whole or streamed, is decoded to the canonical chat answer for billing, each
 * part carrying the native one it came from, which the dialect's encoders pass on with the cost stated.
 */
export const responsesNative: NativeApi<ResponsesCall> = {
  api: "responses",
  path: "/responses",
  request(parsed, outputCap) {
    const request: Json = { ...parsed.raw, max_output_tokens: outputCap, stream: parsed.stream };
    if ("tools" in request) request.tools = pricedTools(request.tools);
    request.input = nativeInput(parsed.body.input, pricedTools);
    return request;
  },
  decodeAnswer: (_parsed, body) => decodeResponse(body),
  decodeStream: (_parsed, native) => decodeResponsesStream(native),
};

/** A Response's usage as the canonical chat usage. */
function chatUsage(usage: unknown): Json | undefined {
  if (!isRecord(usage)) return undefined;
  const input = typeof usage.input_tokens === "number" ? usage.input_tokens : 0;
  const output = typeof usage.output_tokens === "number" ? usage.output_tokens : 0;
  const total = typeof usage.total_tokens === "number" ? usage.total_tokens : input + output;
  return { prompt_tokens: input, completion_tokens: output, total_tokens: total };
}

function finishReason(response: Json, output: Json[]): string {
  if (isRecord(response.incomplete_details) && response.incomplete_details.reason === "max_output_tokens") {
    return "length";
  }
  return output.some((item) => item.type === "function_call" || item.type === "custom_tool_call")
    ? "tool_calls"
    : "stop";
}

/** A whole Response as the canonical completion, carrying the Response; a failed one is the provider's failure. */
export function decodeResponse(body: Json): ChatCompletion {
  if (isRecord(body.error) || body.status === "failed") {
    throw providerRefusal(
      "upstream answered 200 with a failed response",
      JSON.stringify(body.error),
      "responses provider",
    );
  }
  if (!Array.isArray(body.output)) throw new UpstreamError("protocol", "upstream answered a response without output");
  const output = body.output.filter(isRecord);
  let text = "";
  const toolCalls: ChatToolCall[] = [];
  for (const item of output) {
    if (item.type === "message" && Array.isArray(item.content)) {
      for (const part of item.content) if (isRecord(part) && typeof part.text === "string") text += part.text;
    } else if (item.type === "function_call" || item.type === "custom_tool_call") {
      const args = item.type === "function_call" ? item.arguments : JSON.stringify({ input: item.input });
      toolCalls.push({
        id: String(item.call_id ?? ""),
        type: "function",
        function: { name: String(item.name ?? ""), arguments: String(args ?? "") },
      });
    }
  }
  const completion: ChatCompletion = {
    id: typeof body.id === "string" ? body.id : undefined,
    object: "chat.completion",
    created: typeof body.created_at === "number" ? body.created_at : Math.floor(Date.now() / 1000),
    model: typeof body.model === "string" ? body.model : undefined,
    choices: [
      {
        index: 0,
        message: { role: "assistant", content: text, ...(toolCalls.length > 0 ? { tool_calls: toolCalls } : {}) },
        finish_reason: finishReason(body, output),
      },
    ],
    usage: chatUsage(body.usage),
  } as ChatCompletion;
  return carryNative(completion, body);
}

/** A canonical chunk carrying the native event it was decoded from. */
function chunk(native: Json, choices: unknown[], extra: Json = {}): SseEvent {
  return SseEvent.of(carryNative({ object: "chat.completion.chunk", choices, ...extra }, native));
}

const delta = (fields: Json, finish: string | null = null) => [{ index: 0, delta: fields, finish_reason: finish }];

/** One native Responses event as canonical events (chunks carrying it; the end as the usage-only chunk and [DONE]). */
export function decodeResponsesEvent(native: Json): SseEvent[] {
  const text = typeof native.delta === "string" ? native.delta : "";
  const index = typeof native.output_index === "number" ? native.output_index : 0;
  switch (native.type) {
    case "response.output_text.delta":
    case "response.refusal.delta":
      return [chunk(native, delta({ content: text }))];
    case "response.reasoning_summary_text.delta":
    case "response.reasoning_text.delta":
      return [chunk(native, delta({ reasoning: text }))];
    case "response.function_call_arguments.delta":
    case "response.custom_tool_call_input.delta":
      return [chunk(native, delta({ tool_calls: [{ index, function: { arguments: text } }] }))];
    case "response.output_item.added": {
      const item = isRecord(native.item) ? native.item : {};
      if (item.type !== "function_call" && item.type !== "custom_tool_call") return [chunk(native, [])];
      const call: ChatToolCallDelta = {
        index,
        id: String(item.call_id ?? ""),
        type: "function",
        function: { name: String(item.name ?? ""), arguments: "" },
      };
      return [chunk(native, delta({ tool_calls: [call] }))];
    }
    case "response.completed":
    case "response.incomplete": {
      const response = isRecord(native.response) ? native.response : {};
      const output = Array.isArray(response.output) ? response.output.filter(isRecord) : [];
      const usage = chatUsage(response.usage) ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
      return [
        SseEvent.of({ object: "chat.completion.chunk", choices: delta({}, finishReason(response, output)) }),
        chunk(native, [], { usage }),
        new SseEvent("[DONE]"),
      ];
    }
    case "response.failed":
    case "error": {
      const error = isRecord(native.response) && isRecord(native.response.error) ? native.response.error : native;
      const message = typeof error.message === "string" ? error.message : "upstream response failed";
      const code = typeof error.code === "string" ? error.code : "upstream_error";
      return [SseEvent.of(carryNative({ error: { message, type: "upstream_error", param: null, code } }, native))];
    }
    default:
      return [chunk(native, [])];
  }
}

/** The native Responses stream as the canonical chat stream; a provider's [DONE] is dropped (the end makes one). */
export function decodeResponsesStream(native: EventStream): EventStream {
  return eachEvent(native, (event) => {
    if (event.data === undefined) return event;
    const json = event.json();
    if (!json) return undefined;
    return decodeResponsesEvent(json);
  });
}
