import { describe, expect, it } from "vitest";
import { defaultCatalog } from "../../config/catalog/default-catalog";
import { eventStreamOf, bytesOf } from "../billing/__fixtures__/events";
import { readChunks } from "../billing/__fixtures__/read-chunks";
import { chatDialect } from "./chat-dialect";

const catalog = defaultCatalog();
const request = (extra: object) =>
  chatDialect.parse({ model: "vendor-a/gpt-6-luna", messages: [{ role: "user", content: "hi" }], ...extra }, catalog);
const written = (parsed: ReturnType<typeof request>, chunks: readonly string[]) =>
  new Response(bytesOf(chatDialect.encodeStream(parsed, eventStreamOf(chunks)))).text();

describe("the chat dialect", () => {
  it("parses a chat request into itself as the canonical call", () => {
    const parsed = request({ max_tokens: 50, stream: true });
    expect(parsed.chatRequest).toBe(parsed.body);
    expect(parsed).toMatchObject({ maxOutputTokens: 50, stream: true });
    expect(parsed.model.id).toBe("vendor-a/gpt-6-luna");
  });

  it("shows the usage-only chunk only to a caller who asked for usage, every other byte as it came", async () => {
    const source = readChunks("chat-with-usage-crlf-split");
    const asked = await written(request({ stream: true, stream_options: { include_usage: true } }), source);
    expect(asked).toBe(source.join(""));
    const notAsked = await written(request({ stream: true }), source);
    expect(notAsked).not.toContain('"choices":[]');
    expect(notAsked).toContain("data: [DONE]");
    expect(asked.replace(/data: \{"id":[^\r\n]*"choices":\[\][^\r\n]*\r\n\r\n/, "")).toBe(notAsked);
  });

  it("answers a whole completion as it is", () => {
    const completion = { choices: [{ message: { content: "hi" } }], usage: { completion_tokens: 1, cost: "0.1" } };
    expect(chatDialect.encodeAnswer(request({}), completion)).toBe(completion);
  });
});
