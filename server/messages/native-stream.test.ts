import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "../../cli/dev-stack/local-upstream";
import { EventSplitter, SseEvent } from "../http/event-stream";
import { decodeNativeMessage } from "./native-message";
import { encodeNativeEvent, NativeStreamDecoder } from "./native-stream";

let provider: LocalUpstream;
beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0, streamDeltas: 4, faultDirectives: true });
});
afterAll(() => provider?.stop());

/** The development provider's native answer to `body`, as text. */
async function native(body: Record<string, unknown>): Promise<string> {
  const response = await fetch(`${provider.url}/v1/messages`, {
    method: "POST",
    body: JSON.stringify({ model: "m", max_tokens: 100, ...body }),
  });
  return response.text();
}

/** The events of a stream's text. */
function split(text: string): SseEvent[] {
  const splitter = new EventSplitter();
  return [...splitter.push(new TextEncoder().encode(text)), ...splitter.end()];
}

const tools = [{ name: "lookup", input_schema: { type: "object", properties: { term: { type: "string" } } } }];

describe("a native Messages stream", () => {
  it("is decoded into canonical chunks billing meters: text, finish, usage-only chunk, [DONE]", async () => {
    const decoder = new NativeStreamDecoder();
    const canonical = split(await native({ stream: true, messages: [{ role: "user", content: "Hi native" }] })).flatMap(
      (event) => decoder.push(event),
    );
    const chunks = canonical.filter((event) => event.json() !== undefined || event.data === "[DONE]");
    const text = chunks
      .map(
        (event) => (event.json()?.choices as { delta?: { content?: string } }[] | undefined)?.[0]?.delta?.content ?? "",
      )
      .join("");
    expect(text).toContain("Hi native");
    const usage = chunks.find((event) => (event.json()?.choices as unknown[] | undefined)?.length === 0)?.json()?.usage;
    expect(usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: expect.any(Number) });
    const finish = chunks
      .map((event) => (event.json()?.choices as { finish_reason?: string }[] | undefined)?.[0]?.finish_reason)
      .filter(Boolean);
    expect(finish).toEqual(["stop"]);
    expect(chunks.at(-1)?.data).toBe("[DONE]");
  });

  it("streams a tool call's arguments as canonical tool call deltas", async () => {
    const decoder = new NativeStreamDecoder();
    const text = await native({ stream: true, tools, messages: [{ role: "user", content: "use lookup for cats" }] });
    const calls = split(text)
      .flatMap((event) => decoder.push(event))
      .flatMap(
        (event) =>
          (
            event.json()?.choices as
              | {
                  delta?: {
                    tool_calls?: { index: number; id?: string; function: { name?: string; arguments?: string } }[];
                  };
                }[]
              | undefined
          )?.[0]?.delta?.tool_calls ?? [],
      );
    expect(calls[0]).toMatchObject({
      index: 0,
      id: expect.stringMatching(/^toolu_/),
      function: { name: "lookup", arguments: "" },
    });
    expect(JSON.parse(calls.map((call) => call.function.arguments ?? "").join(""))).toEqual({ term: "cats" });
  });

  it("is encoded back byte for byte, but for the cost billing put in the usage chunk, now in message_delta", async () => {
    const original = await native({ stream: true, messages: [{ role: "user", content: "Bytes" }] });
    const decoder = new NativeStreamDecoder();
    const canonical = split(original).flatMap((event) => decoder.push(event));
    const usageChunk = canonical.find((event) => (event.json()?.choices as unknown[] | undefined)?.length === 0)!;
    Object.assign(usageChunk.json()!.usage as object, { cost: "0.5", prepaid_charged_tokens: 9 });
    usageChunk.changed();
    const written = canonical.flatMap((event) => encodeNativeEvent(event, "sold/model")).map((event) => event.text());
    const originalTexts = split(original).map((event) => event.text());
    expect(written).toHaveLength(originalTexts.length);
    for (const [index, text] of written.entries()) {
      if (text.startsWith("event: message_delta")) {
        const data = JSON.parse(text.split("data: ")[1]!) as { usage: Record<string, unknown> };
        expect(data.usage).toMatchObject({ cost: "0.5", prepaid_charged_tokens: 9, output_tokens: expect.any(Number) });
      } else if (text.startsWith("event: message_start")) {
        expect(text).toBe(originalTexts[index]!.replace('"model":"m"', '"model":"sold/model"'));
      } else expect(text).toBe(originalTexts[index]);
    }
  });

  it("turns the provider's error event into a canonical error that carries it, and billing's own errors into Anthropic's", () => {
    const decoder = new NativeStreamDecoder();
    const nativeError = SseEvent.of(
      { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      "error",
    );
    const [canonical] = decoder.push(nativeError);
    expect(canonical!.json()).toMatchObject({ error: { message: "Overloaded", code: "upstream_error" } });
    expect(encodeNativeEvent(canonical!)).toEqual([nativeError]);
    const billingError = SseEvent.of({
      error: { message: "Settlement failed", type: "payment_error", code: "settlement_failed" },
    });
    expect(encodeNativeEvent(billingError).map((event) => event.json())).toEqual([
      { type: "error", error: { type: "billing_error", message: "Settlement failed" } },
    ]);
    expect(encodeNativeEvent(new SseEvent("[DONE]"))).toEqual([]);
  });
});

describe("a native whole message", () => {
  it("is decoded into a canonical completion, and encoded back with the cost in its usage", async () => {
    const body = JSON.parse(
      await native({ tools, messages: [{ role: "user", content: "use lookup for dogs" }] }),
    ) as Record<string, unknown>;
    const decoded = decodeNativeMessage(body);
    const choice = decoded.canonical.choices![0]!;
    expect(choice.finish_reason).toBe("tool_calls");
    expect(choice.message!.content).toBeNull();
    expect(JSON.parse(choice.message!.tool_calls![0]!.function!.arguments!)).toEqual({ term: "dogs" });
    const usage = body.usage as { input_tokens: number; output_tokens: number };
    expect(decoded.canonical.usage).toEqual({
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      total_tokens: usage.input_tokens + usage.output_tokens,
    });
    const billed = decoded.encode({ usage: { ...decoded.canonical.usage, cost: "1.0" } }, "sold/model");
    expect(billed).toEqual({ ...body, model: "sold/model", usage: { ...usage, cost: "1.0" } });
  });

  it("counts cache reads and writes as input, and refuses an error sent with 200 or no message", () => {
    const message = {
      type: "message",
      content: [
        { type: "thinking", thinking: "hm" },
        { type: "text", text: "ok" },
      ],
      stop_reason: "max_tokens",
    };
    const decoded = decodeNativeMessage({
      ...message,
      usage: { input_tokens: 5, cache_creation_input_tokens: 10, cache_read_input_tokens: 20, output_tokens: 3 },
    });
    expect(decoded.canonical.usage).toEqual({ prompt_tokens: 35, completion_tokens: 3, total_tokens: 38 });
    expect(decoded.canonical.choices![0]).toMatchObject({
      finish_reason: "length",
      message: { content: "ok", reasoning_content: "hm" },
    });
    expect(decodeNativeMessage(message).canonical.usage).toBeUndefined();
    expect(() => decodeNativeMessage({ type: "error", error: { type: "api_error", message: "x" } })).toThrow(
      /200 with an error/,
    );
    expect(() => decodeNativeMessage({ id: "x" })).toThrow(/without a message/);
  });
});
