import { describe, expect, it } from "vitest";
import { withSoldModelId } from "./sold-model-stream";
import { parseEventStream, writeEventStream } from "../http/event-stream";

async function through(parts: string[], soldId: string): Promise<string> {
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  return new Response(writeEventStream(withSoldModelId(parseEventStream(source), soldId))).text();
}

describe("a stream naming the provider's model", () => {
  it("names the sold model in every chunk, whatever the reads cut", async () => {
    const event = (text: string) =>
      `data: {"id":"c1","model":"luna-2026.1","choices":[{"delta":{"content":"${text}"}}]}\n\n`;
    const stream = `${event("Hel")}${event("lo")}data: [DONE]\n\n`;
    const expected = stream.replaceAll('"model":"luna-2026.1"', '"model":"vendor-a/gpt-6-luna"');
    for (const cut of [1, 17, 40, stream.length - 3]) {
      const parts = [stream.slice(0, cut), stream.slice(cut)];
      expect(await through(parts, "vendor-a/gpt-6-luna")).toBe(expected);
    }
  });

  it("rewrites a dated version too, and leaves a model named inside a string as it is", async () => {
    const text =
      'data: {"model" : "luna-2026-11-24","choices":[{"delta":{"content":"say \\"model\\": \\"x\\"","tool_calls":[{"function":{"arguments":"{\\"model\\":\\"y\\"}"}}]}}]}\n\n';
    // The changed chunk is written anew from its JSON: the sold id in place, the strings inside as they were.
    const chunk = JSON.parse(text.slice("data: ".length)) as Record<string, unknown>;
    expect(await through([text], "sold")).toBe(`data: ${JSON.stringify({ ...chunk, model: "sold" })}\n\n`);
    // A $ in the sold id is taken literally; an escaped quote in the provider's value is part of it.
    expect(await through(['data: {"model":"a\\"b"}\n\n'], "a$1")).toBe('data: {"model":"a$1"}\n\n');
  });

  it("passes a last line without an end of line", async () => {
    expect(await through(['data: {"model":"p"}'], "s")).toBe('data: {"model":"s"}');
  });
});
