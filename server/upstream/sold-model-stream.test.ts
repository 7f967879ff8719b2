import { describe, expect, it } from "vitest";
import { withSoldModelId } from "./sold-model-stream";

async function through(parts: string[], providerId: string, soldId: string): Promise<string> {
  const encoder = new TextEncoder();
  const source = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const part of parts) controller.enqueue(encoder.encode(part));
      controller.close();
    },
  });
  return new Response(source.pipeThrough(withSoldModelId(providerId, soldId))).text();
}

describe("a stream naming the provider's model", () => {
  it("names the sold model in every chunk, whatever the reads cut", async () => {
    const event = (text: string) =>
      `data: {"id":"c1","model":"luna-2026.1","choices":[{"delta":{"content":"${text}"}}]}\n\n`;
    const stream = `${event("Hel")}${event("lo")}data: [DONE]\n\n`;
    const expected = stream.replaceAll('"model":"luna-2026.1"', '"model":"vendor-a/gpt-6-luna"');
    for (const cut of [1, 17, 40, stream.length - 3]) {
      const parts = [stream.slice(0, cut), stream.slice(cut)];
      expect(await through(parts, "luna-2026.1", "vendor-a/gpt-6-luna")).toBe(expected);
    }
  });

  it("rewrites only the model field holding exactly the provider's id", async () => {
    const text = 'data: {"model" : "luna-2026.1","content":"the model luna-2026.1x","other":"luna-2026.1"}\n\n';
    expect(await through([text], "luna-2026.1", "sold")).toBe(
      'data: {"model" : "sold","content":"the model luna-2026.1x","other":"luna-2026.1"}\n\n',
    );
    // A dot in the id is a dot, not any character; a $ in the sold id is taken literally.
    expect(await through(['{"model":"lunaX2026"}\n'], "luna.2026", "a$1")).toBe('{"model":"lunaX2026"}\n');
    expect(await through(['{"model":"luna.2026"}\n'], "luna.2026", "a$1")).toBe('{"model":"a$1"}\n');
  });

  it("passes a last line without an end of line", async () => {
    expect(await through(['data: {"model":"p"}'], "p", "s")).toBe('data: {"model":"s"}');
  });
});
