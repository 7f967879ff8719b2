import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import type { ApiError } from "../core/errors";
import { SseEvent } from "../http/event-stream";
import { responsesDialect } from "./responses-dialect";

/** The one request `codex exec` sent (e2e/__fixtures__/agents/README.md). */
const recorded = (
  JSON.parse(readFileSync("e2e/__fixtures__/agents/codex-responses-request.json", "utf8")) as {
    body: Record<string, unknown>;
  }[]
)[0]!.body;

type Item = { type?: string; role?: string; tools?: Item[]; name?: string };
const additionalTools = (recorded.input as Item[]).find((item) => item.type === "additional_tools")!;

/** The same turn as Codex sends it for a model it has no metadata for: top-level tools, no additional_tools item. */
const unknownModelVariant = {
  ...recorded,
  input: (recorded.input as Item[]).filter((item) => item.type !== "additional_tools"),
  tools: [...additionalTools.tools!, { type: "web_search", external_web_access: false }],
  reasoning: { summary: "auto" },
  parallel_tool_calls: true,
  text: undefined,
};

/** A later turn: Codex sends back the reasoning item, the custom tool's call and its output. */
const laterTurn = {
  ...recorded,
  input: [
    ...(recorded.input as Item[]),
    { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA..." },
    { type: "custom_tool_call", call_id: "call_1", name: "exec", input: "text('hi')" },
    { type: "custom_tool_call_output", call_id: "call_1", output: [{ type: "input_text", text: "hi" }] },
    { type: "function_call", call_id: "call_2", name: "wait", arguments: '{"cell_id":"1"}' },
    { type: "function_call_output", call_id: "call_2", output: "done" },
  ],
};

const parse = (body: unknown) => responsesDialect.parse(body, defaultCatalog());

function refusal(body: unknown) {
  try {
    parse(body);
    return "accepted";
  } catch (error) {
    const { status, message, options } = error as ApiError;
    return { status, param: options.param, message };
  }
}

describe("Codex CLI's Responses request", () => {
  it("is accepted as recorded and translated to a chat call: developer messages, namespaces flattened", () => {
    const call = parse(recorded);
    const chat = call.chatRequest;
    expect(call.stream).toBe(true);
    expect(chat.messages.map((message) => message.role)).toEqual([
      "developer",
      "developer",
      "developer",
      "developer",
      "user",
      "user",
    ]);
    expect(chat.messages.at(-1)!.content).toBe("Say hello.");
    const names = chat.tools!.map((tool) => tool.function.name);
    expect(names).toEqual(expect.arrayContaining(["exec", "wait", "sleep", "spawn_agent"]));
    expect(new Set(names).size).toBe(names.length);
    // The freeform tool takes one string, `input`; Codex's function tools keep their schemas.
    const exec = chat.tools!.find((tool) => tool.function.name === "exec")!;
    expect(exec.function.parameters).toMatchObject({ properties: { input: { type: "string" } }, required: ["input"] });
    expect(call.customTools.has("exec")).toBe(true);
    expect(chat).toMatchObject({
      parallel_tool_calls: false,
      tool_choice: "auto",
      prompt_cache_key: recorded.prompt_cache_key,
    });
    // What chat cannot be told is dropped, never forwarded.
    for (const dropped of [
      "reasoning",
      "reasoning_effort",
      "include",
      "store",
      "text",
      "client_metadata",
      "verbosity",
    ]) {
      expect(chat, dropped).not.toHaveProperty(dropped);
    }
  });

  it("is accepted in the unknown-model variant: top-level tools, the hosted web_search dropped", () => {
    const chat = parse(unknownModelVariant).chatRequest;
    const names = chat.tools!.map((tool) => tool.function.name);
    expect(names).toContain("exec");
    expect(chat.tools!.every((tool) => tool.type === "function")).toBe(true);
    expect(JSON.stringify(chat)).not.toContain("web_search");
  });

  it("takes back reasoning items (dropped), custom and function calls and their outputs on a later turn", () => {
    const messages = parse(laterTurn).chatRequest.messages.slice(-4, -1);
    expect(messages).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "exec", arguments: '{"input":"text(\'hi\')"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "hi" },
      expect.objectContaining({ role: "assistant" }),
    ]);
    expect(JSON.stringify(parse(laterTurn).chatRequest)).not.toContain("gAAA");
  });

  it("answers a chat call of a custom tool as a custom_tool_call with its input, whole and streamed", () => {
    const call = parse(recorded);
    const toolCall = {
      id: "call_9",
      type: "function" as const,
      function: { name: "exec", arguments: '{"input":"1+1"}' },
    };
    const whole = responsesDialect.encodeAnswer(call, {
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: null, tool_calls: [toolCall] },
          finish_reason: "tool_calls",
        },
      ],
      usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 },
    }) as { output: Record<string, unknown>[] };
    expect(whole.output).toEqual([
      expect.objectContaining({ type: "custom_tool_call", call_id: "call_9", name: "exec", input: "1+1" }),
    ]);
  });

  it("keeps the refusals: a price-changing field, an unsupported one, a malformed value", () => {
    expect(refusal({ ...recorded, service_tier: "priority" })).toMatchObject({ status: 400, param: "service_tier" });
    expect(refusal({ ...recorded, previous_response_id: "resp_1" })).toMatchObject({
      status: 400,
      message: expect.stringContaining("Unsupported parameter: 'previous_response_id'"),
    });
    expect(refusal({ ...recorded, reasoning: "high" })).toMatchObject({ status: 400, param: "reasoning" });
    expect(refusal({ ...recorded, reasoning: { effort: "extreme" } })).toMatchObject({ param: "reasoning.effort" });
    expect(refusal({ ...recorded, include: "x" })).toMatchObject({ param: "include" });
    expect(refusal({ ...recorded, store: "no" })).toMatchObject({ param: "store" });
    expect(refusal({ ...unknownModelVariant, tools: [{ type: "custom", name: "a b" }] })).toMatchObject({
      param: "tools[0].name",
    });
    expect(refusal({ ...recorded, input: [{ type: "custom_tool_call", call_id: "c", name: "exec" }] })).toMatchObject({
      param: "input[0].input",
    });
    expect(refusal({ ...recorded, input: [{ type: "teleport" }] })).toMatchObject({ status: 400, param: "input[0]" });
    expect(refusal({ ...recorded, store: true })).toBe("accepted");
  });
});

describe("a native Responses route", () => {
  const call = parse({ ...unknownModelVariant, stream: false, max_output_tokens: 99_999 });

  it("is sent the request as it came, output capped, hosted tools left out", () => {
    const request = responsesDialect.native!.request(call, 500);
    expect(request).toMatchObject({
      reasoning: { summary: "auto" },
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: recorded.prompt_cache_key,
      client_metadata: recorded.client_metadata,
      max_output_tokens: 500,
      stream: false,
    });
    expect(JSON.stringify(request.tools)).not.toContain("web_search");
    expect((request.tools as Item[]).find((tool) => tool.type === "namespace")).toBeDefined();
  });

  const response = {
    id: "resp_1",
    object: "response",
    model: "provider-model-2026-01-01",
    status: "completed",
    output: [
      { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAA" },
      { type: "message", id: "msg_1", role: "assistant", content: [{ type: "output_text", text: "Hello" }] },
    ],
    usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14, output_tokens_details: { reasoning_tokens: 2 } },
  };

  it("answers whole: decoded for billing, passed on as it came with the cost and the sold model", () => {
    const completion = responsesDialect.native!.decodeAnswer(call, response);
    expect(completion.choices![0]!.message!.content).toBe("Hello");
    expect(completion.usage).toEqual({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
    // Billing states the cost in a copy of the completion's usage.
    const billed = { ...completion, usage: { ...completion.usage, cost: "0.01" } };
    expect(responsesDialect.encodeAnswer(call, billed)).toEqual({
      ...response,
      model: "vendor-a/gpt-6-luna",
      usage: { ...response.usage, cost: "0.01" },
    });
  });

  it("refuses a failed Response as the provider's failure", () => {
    expect(() => responsesDialect.native!.decodeAnswer(call, { status: "failed", error: { message: "x" } })).toThrow();
  });

  it("streams: native events decoded to the canonical stream, then passed on unchanged but for the cost", async () => {
    const native = [
      { type: "response.created", sequence_number: 0, response: { id: "resp_1", model: "p", status: "in_progress" } },
      { type: "response.output_item.added", sequence_number: 1, output_index: 0, item: { type: "message" } },
      { type: "response.output_text.delta", sequence_number: 2, output_index: 0, delta: "Hel" },
      { type: "response.output_text.delta", sequence_number: 3, output_index: 0, delta: "lo" },
      { type: "response.output_item.done", sequence_number: 4, output_index: 0, item: response.output[1] },
      { type: "response.completed", sequence_number: 5, response: { ...response, model: "p" } },
    ];
    const source = new ReadableStream<SseEvent[]>({
      start(controller) {
        controller.enqueue(native.map((event) => new SseEvent(JSON.stringify(event), event.type)));
        controller.close();
      },
    });
    const canonical: SseEvent[] = [];
    const reader = responsesDialect.native!.decodeStream(call, source).getReader();
    for (let next = await reader.read(); !next.done; next = await reader.read()) canonical.push(...next.value);
    const chunks = canonical.map((event) => event.data ?? JSON.stringify(event.json()));
    expect(
      chunks.filter((data) => data.includes('"content"')).map((data) => JSON.parse(data).choices[0].delta.content),
    ).toEqual(["Hel", "lo"]);
    expect(chunks.at(-1)).toBe("[DONE]");
    const usageChunk = canonical.at(-2)!.json()!;
    expect(usageChunk).toMatchObject({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 4 } });
    // Billing appends the cost to the usage-only chunk in place; the encoder passes the native events on.
    Object.assign(usageChunk.usage as object, { cost: "0.01" });
    const encoded = responsesDialect.encodeStream(
      call,
      new ReadableStream({
        start(controller) {
          controller.enqueue(canonical);
          controller.close();
        },
      }),
    );
    const out: SseEvent[] = [];
    const encodedReader = encoded.getReader();
    for (let next = await encodedReader.read(); !next.done; next = await encodedReader.read()) out.push(...next.value);
    const written = out.map((event) =>
      event.data === "[DONE]" ? "[DONE]" : JSON.parse(event.text().slice(event.text().indexOf("data: ") + 6)),
    );
    expect(written.slice(1, 5)).toEqual(native.slice(1, 5));
    expect(written[0].response.model).toBe("vendor-a/gpt-6-luna");
    expect(written[5]).toEqual({
      ...native[5],
      response: { ...response, model: "vendor-a/gpt-6-luna", usage: { ...response.usage, cost: "0.01" } },
    });
    expect(written.at(-1)).toBe("[DONE]");
  });
});
