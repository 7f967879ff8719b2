import Anthropic from "@anthropic-ai/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { startLocalUpstream, type LocalUpstream } from "../../cli/dev-stack/local-upstream";
import { listen, readJson, type JsonHttpServer } from "../../cli/lib/json-http-server";
import { ApiError } from "../core/errors";
import { eventStreamAnswer, jsonAnswer, type ApiAnswer } from "../http/api-answer";
import { eachEvent, parseEventStream, type EventStream } from "../http/event-stream";
import { sendAnswer } from "../http/node-http-adapter";
import type { ChatCompletion, ChatUsage } from "../chat/chat-wire";
import { messageFromChatCompletion } from "./message-object";
import { messagesErrorAnswer } from "./messages-error";
import { countMessagesTokens } from "./messages-count-tokens";
import { parseCountTokensRequest, parseMessagesRequest } from "./messages-request";
import { encodeMessagesStream } from "./messages-stream";
import { decodeNativeMessage } from "./native-message";
import { nativeRequestBody } from "./native-request";
import { encodeNativeStream, decodeNativeStream } from "./native-stream";
import { toChatRequest } from "./to-chat-request";

/**
 * The wire format proved with the official SDK: a small server speaks Messages through these modules alone, to the
 * development provider's chat API (translated) or its Messages API (native, at /native), with a stand-in for
 * billing that appends a prepaid cost to the canonical usage, as billing does. The SDK reads its answers.
 */
const COST = { cost: "0.000042", prepaid_charged_tokens: 42, prepaid_remaining_tokens: 958 };
const catalog = defaultCatalog();
const MODEL = "vendor-a/gpt-6-luna";

/** Billing's part: the cost appended to the final usage chunk, in place. */
function withCost(stream: EventStream): EventStream {
  return eachEvent(stream, (event) => {
    const json = event.json();
    if (json && Array.isArray(json.choices) && json.choices.length === 0 && json.usage) {
      Object.assign(json.usage, COST);
      event.changed();
    }
    return event;
  });
}

async function answer(upstream: string, native: boolean, body: unknown, count: boolean): Promise<ApiAnswer> {
  if (count) return jsonAnswer(await countMessagesTokens(parseCountTokensRequest(body, catalog)));
  let parsed;
  try {
    parsed = parseMessagesRequest(body, catalog);
  } catch (error) {
    return messagesErrorAnswer(error);
  }
  const sent = native ? nativeRequestBody(parsed, MODEL) : toChatRequest(parsed);
  const response = await fetch(`${upstream}/v1/${native ? "messages" : "chat/completions"}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(sent),
  });
  if (response.status !== 200) {
    await response.body?.cancel();
    return messagesErrorAnswer(
      new ApiError(response.status === 429 ? "insufficient_quota" : "upstream_error", "upstream failed"),
    );
  }
  if (parsed.body.stream) {
    const events = parseEventStream(response.body!);
    if (native) return eventStreamAnswer(encodeNativeStream(withCost(decodeNativeStream(events))), {});
    return eventStreamAnswer(encodeMessagesStream(withCost(events), { model: parsed.body.model }), {});
  }
  const json = (await response.json()) as Record<string, unknown>;
  const billed = (usage: ChatUsage | null | undefined) => ({ usage: { ...usage, ...COST } });
  if (native) {
    const decoded = decodeNativeMessage(json);
    return jsonAnswer(decoded.encode(billed(decoded.canonical.usage)));
  }
  const completion = json as unknown as ChatCompletion;
  return jsonAnswer(messageFromChatCompletion({ ...completion, ...billed(completion.usage) }, parsed.body.model));
}

let provider: LocalUpstream;
let gateway: JsonHttpServer;
/** The paths the provider was asked, in order. */
const providerPaths: string[] = [];

beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0, streamDeltas: 6, faultDirectives: true });
  provider.server.on("request", (request: { url?: string }) => providerPaths.push(request.url ?? ""));
  gateway = await listen(
    async (request, response) => {
      const native = request.url?.startsWith("/native") === true;
      const body = await readJson(request);
      const count = request.url?.includes("/count_tokens") === true;
      await sendAnswer(await answer(provider.url, native, body, count), response);
    },
    0,
    "messages test gateway",
  );
});
afterAll(async () => {
  await gateway?.stop();
  await provider?.stop();
});

const weather = {
  name: "get_weather",
  description: "The weather in a city",
  input_schema: { type: "object" as const, properties: { city: { type: "string" } }, required: ["city"] },
};

describe.each([
  ["translated to chat", ""],
  ["native", "/native"],
])("the official Anthropic SDK, %s", (_name, path) => {
  const client = () => new Anthropic({ apiKey: "sk-test", baseURL: `${gateway.url}${path}`, maxRetries: 0 });

  it("reads a whole message, its usage and cost", async () => {
    const message = await client().messages.create({
      model: MODEL,
      max_tokens: 200,
      system: "Be brief.",
      messages: [{ role: "user", content: "Hello there" }],
    });
    expect(message.type).toBe("message");
    expect(message.stop_reason).toBe("end_turn");
    expect(message.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("Hello there") });
    expect(message.usage.input_tokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(message.usage).toMatchObject(COST);
    expect(providerPaths.at(-1)).toBe(path ? "/v1/messages" : "/v1/chat/completions");
  });

  it("reads a stream with messages.stream() and finalMessage(), the cost in message_delta", async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 200,
      messages: [{ role: "user", content: "Stream it" }],
    });
    const texts: string[] = [];
    const deltas: unknown[] = [];
    stream.on("text", (text) => texts.push(text));
    stream.on("streamEvent", (event) => {
      if (event.type === "message_delta") deltas.push(event.usage);
    });
    const message = await stream.finalMessage();
    expect(texts.length).toBeGreaterThan(1);
    expect(message.content).toEqual([{ type: "text", text: texts.join("") }]);
    expect(message.content[0]).toMatchObject({ text: expect.stringContaining("Stream it") });
    expect(message.stop_reason).toBe("end_turn");
    expect(message.usage.output_tokens).toBeGreaterThan(0);
    expect(deltas).toEqual([expect.objectContaining({ output_tokens: message.usage.output_tokens, ...COST })]);
  });

  it("makes a tool-use round trip, streamed arguments arriving as input_json_delta", async () => {
    const stream = client().messages.stream({
      model: MODEL,
      max_tokens: 200,
      tools: [weather],
      messages: [{ role: "user", content: "Call get_weather for Paris" }],
    });
    const partials: string[] = [];
    stream.on("streamEvent", (event) => {
      if (event.type === "content_block_delta" && event.delta.type === "input_json_delta")
        partials.push(event.delta.partial_json);
    });
    const first = await stream.finalMessage();
    expect(first.stop_reason).toBe("tool_use");
    const call = first.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ type: "tool_use", name: "get_weather", input: { city: "Paris" } });
    expect(partials.length).toBeGreaterThan(1);
    expect(JSON.parse(partials.join(""))).toEqual({ city: "Paris" });
    const second = await client().messages.create({
      model: MODEL,
      max_tokens: 200,
      tools: [weather],
      messages: [
        { role: "user", content: "Call get_weather for Paris" },
        { role: "assistant", content: first.content },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: call!.type === "tool_use" ? call!.id : "", content: "18C and sunny" },
          ],
        },
      ],
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("18C and sunny") });
  });

  it("counts tokens with messages.countTokens() as the answer's usage reports them", async () => {
    const params = { model: MODEL, messages: [{ role: "user" as const, content: "Count me" }] };
    const counted = await client().messages.countTokens(params);
    const message = await client().messages.create({ ...params, max_tokens: 20 });
    expect(counted.input_tokens).toBe(message.usage.input_tokens);
  });

  it("raises the SDK's error classes for Anthropic's error bodies", async () => {
    const bad = client().messages.create({ model: MODEL, max_tokens: 0, messages: [{ role: "user", content: "x" }] });
    await expect(bad).rejects.toBeInstanceOf(Anthropic.BadRequestError);
    const unknown = client().messages.create({
      model: "claude-nope",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    });
    await expect(unknown).rejects.toBeInstanceOf(Anthropic.NotFoundError);
    const limited = client().messages.create({
      model: MODEL,
      max_tokens: 5,
      messages: [{ role: "user", content: "[paysvc-dev-fault:rate-limited]" }],
    });
    await expect(limited).rejects.toMatchObject({
      status: 429,
      error: { type: "error", error: { type: "rate_limit_error" } },
    });
  });
});
