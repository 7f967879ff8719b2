import { randomFillSync } from "node:crypto";
import { costFieldsOf, type ChatCompletion, type ChatUsage } from "../chat/chat-wire";
import type { ParsedResponsesRequest } from "./responses-request";

/** The request as the answer describes it, and its custom tools' names. */
export type AnsweredRequest = ParsedResponsesRequest & { customTools?: ReadonlySet<string> };

/** The input a custom tool's call carries: the `input` string of its chat arguments (or the arguments as they are). */
export function customInput(args: string): string {
  try {
    const parsed: unknown = JSON.parse(args);
    if (typeof parsed === "object" && parsed !== null && typeof (parsed as { input?: unknown }).input === "string") {
      return (parsed as { input: string }).input;
    }
  } catch {
    // Not JSON: the model wrote the input itself.
  }
  return args;
}

/** A chat tool call as the output item it answers: a custom_tool_call for a custom tool, else a function_call. */
export function callItem(
  parsed: AnsweredRequest,
  call: { id: string; name: string; arguments: string },
  status: "in_progress" | "completed",
): OutputItem {
  if (parsed.customTools?.has(call.name)) {
    const input = customInput(call.arguments);
    return { id: newId("ctc"), type: "custom_tool_call", status, call_id: call.id, name: call.name, input };
  }
  return {
    id: newId("fc"),
    type: "function_call",
    status,
    call_id: call.id,
    name: call.name,
    arguments: call.arguments,
  };
}

export type OutputItem =
  | {
      id: string;
      type: "message";
      status: "in_progress" | "completed";
      role: "assistant";
      content: { type: "output_text"; text: string; annotations: unknown[] }[];
    }
  | {
      id: string;
      type: "function_call";
      status: "in_progress" | "completed";
      call_id: string;
      name: string;
      arguments: string;
      namespace?: string;
    }
  | {
      id: string;
      type: "custom_tool_call";
      status: "in_progress" | "completed";
      call_id: string;
      name: string;
      input: string;
    };

/** A Response's usage: its token counts, and what the call cost (billing's fields, chat/chat-wire.ts). */
export type ResponseUsage = Record<string, unknown> & {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
};

/** Random bytes for ids, drawn 24 at a time: one randomBytes call per id took 0.02 to 0.05 ms of the app server's CPU. */
const idPool = Buffer.alloc(24 * 256);
let idPoolUsed = idPool.length;

/** Ids shaped like the real API's: a prefix and 48 hex digits. */
export function newId(prefix: "resp" | "msg" | "fc" | "ctc"): string {
  if (idPoolUsed === idPool.length) {
    randomFillSync(idPool);
    idPoolUsed = 0;
  }
  const start = idPoolUsed;
  idPoolUsed += 24;
  return `${prefix}_${idPool.toString("hex", start, idPoolUsed)}`;
}

export function messageItem(text: string, status: "in_progress" | "completed", id = newId("msg")): OutputItem {
  return { id, type: "message", status, role: "assistant", content: [{ type: "output_text", text, annotations: [] }] };
}

export function outputText(output: readonly OutputItem[]): string {
  let text = "";
  for (const item of output) if (item.type === "message") for (const part of item.content) text += part.text;
  return text;
}

/** A Response object with every field the official SDK reads. */
export function responseObject(options: {
  id: string;
  createdAt: number;
  parsed: ParsedResponsesRequest;
  status: "in_progress" | "completed";
  output: OutputItem[];
  usage?: ResponseUsage;
  truncated?: boolean;
}): Record<string, unknown> {
  const { body } = options.parsed;
  return {
    id: options.id,
    object: "response",
    created_at: options.createdAt,
    status: options.status,
    error: null,
    incomplete_details: options.truncated ? { reason: "max_output_tokens" } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: options.parsed.maxOutputTokens,
    model: body.model,
    output: options.output,
    output_text: outputText(options.output),
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    store: false,
    temperature: body.temperature ?? null,
    text: { format: { type: "text" } },
    tool_choice: body.tool_choice ?? "auto",
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: "disabled",
    metadata: body.metadata ?? {},
    usage: options.usage ?? null,
  };
}

/** The canonical usage as a Response's: its token counts, and the cost billing stated in it. */
export function usageFromChat(usage: ChatUsage | null | undefined): ResponseUsage | undefined {
  if (!usage) return undefined;
  const input = usage.prompt_tokens ?? 0;
  const output = usage.completion_tokens ?? 0;
  return {
    input_tokens: input,
    output_tokens: output,
    total_tokens: usage.total_tokens ?? input + output,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens_details: { reasoning_tokens: 0 },
    ...costFieldsOf(usage),
  };
}

/** A non-streamed chat completion translated back into a Response. */
export function fromChatCompletion(parsed: AnsweredRequest, completion: ChatCompletion): Record<string, unknown> {
  const choice = completion.choices?.[0];
  const text = typeof choice?.message?.content === "string" ? choice.message.content : "";
  const calls = choice?.message?.tool_calls ?? [];
  const output: OutputItem[] = [];
  if (text || calls.length === 0) output.push(messageItem(text, "completed"));
  for (const call of calls) {
    const id = call.id ?? newId("fc");
    output.push(
      callItem(parsed, { id, name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" }, "completed"),
    );
  }
  return responseObject({
    id: newId("resp"),
    createdAt: typeof completion.created === "number" ? completion.created : Math.floor(Date.now() / 1000),
    parsed,
    status: "completed",
    output,
    usage: usageFromChat(completion.usage),
    truncated: choice?.finish_reason === "length",
  });
}
