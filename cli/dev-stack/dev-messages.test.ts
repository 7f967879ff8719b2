import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startLocalUpstream, type LocalUpstream } from "./local-upstream";

let provider: LocalUpstream;
beforeAll(async () => {
  provider = await startLocalUpstream({ port: 0, faultDirectives: true });
});
afterAll(() => provider?.stop());

const post = (body: unknown) =>
  fetch(`${provider.url}/v1/messages?beta=true`, { method: "POST", body: JSON.stringify(body) });
const ask = (content: string, extra: object = {}) =>
  post({ model: "m", max_tokens: 50, messages: [{ role: "user", content }], ...extra });

describe("the development provider's Messages API", () => {
  it("answers as the chat does, in Anthropic's shape, and notes the model asked for", async () => {
    const message = (await (await ask("Hello messages")).json()) as Record<string, unknown>;
    expect(message).toMatchObject({
      type: "message",
      role: "assistant",
      model: "m",
      stop_reason: "end_turn",
      content: [{ type: "text", text: expect.stringContaining('reply to "Hello messages"') }],
      usage: { input_tokens: expect.any(Number), output_tokens: expect.any(Number) },
    });
    expect(provider.chatRequestsReceived.at(-1)?.model).toBe("m");
  });

  it("stops at max_tokens as the chat does", async () => {
    const message = (await (await ask("[paysvc-dev-long] go", { max_tokens: 5 })).json()) as {
      stop_reason: string;
      usage: { output_tokens: number };
    };
    expect(message).toMatchObject({ stop_reason: "max_tokens", usage: { output_tokens: 5 } });
  });

  it("answers faults and bad bodies with Anthropic's errors", async () => {
    const failed = await ask("[paysvc-dev-fault:http-error]");
    expect(failed.status).toBe(500);
    expect(await failed.json()).toEqual({
      type: "error",
      error: { type: "api_error", message: "development provider fault: http-error" },
    });
    const bad = await post({ model: "m", max_tokens: 5, messages: [{ role: "robot", content: "x" }] });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error", message: expect.stringContaining("messages.0.role") },
    });
    const streamed = await ask("[paysvc-dev-fault:error-in-200]", { stream: true });
    expect(streamed.status).toBe(200);
    expect(await streamed.text()).toContain('event: error\ndata: {"type":"error","error":{"type":"api_error"');
  });
});
