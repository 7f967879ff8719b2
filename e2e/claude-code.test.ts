import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodePng } from "../cli/dev-stack/png";
import { runClaudeCode } from "./support/coding-agents";
import { startMessagesNativeApp } from "./support/messages-native-app";
import { buyPrepaidCode, stack } from "./support/payments";

/**
 * Claude Code (the pinned devDependency, run offline: e2e/support/coding-agents.ts) spending a prepaid key, as a
 * person who bought one for it would set it up: ANTHROPIC_BASE_URL = the origin, ANTHROPIC_AUTH_TOKEN = the key.
 * Against the default app (an OpenAI-compatible route: the call is translated) and against a route that speaks
 * Messages natively (passed through): it answers, and the key is charged exactly the usage it was told.
 */

const MODEL = "vendor-a/gpt-6-luna";
const payer = () => stack().payers[7]!;
let native: Awaited<ReturnType<typeof startMessagesNativeApp>>;

beforeAll(async () => {
  native = await startMessagesNativeApp();
});

afterAll(async () => {
  await native?.stop();
});

async function usedTokens(origin: string, code: string): Promise<{ used: number; reserved: number }> {
  const response = await fetch(`${origin}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } });
  return ((await response.json()) as { tokens: { used: number; reserved: number } }).tokens;
}

async function claudeCodeOn(origin: string) {
  const key = await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 100_000 }, "/prepaid/codes", origin);
  const run = await runClaudeCode({ baseUrl: origin, authToken: key.code, model: MODEL, prompt: "Say hello." });
  expect(run.exitCode, run.stdout + run.stderr).toBe(0);
  expect(run.json).toMatchObject({ type: "result", is_error: false });
  // The development provider echoes the start of the last user turn (Claude Code puts a reminder first).
  expect(run.json!.result).toMatch(/^Local development reply to "/);
  const { input_tokens, output_tokens } = run.json!.usage;
  expect(input_tokens).toBeGreaterThan(1000); // Claude Code's system prompt and tools
  expect(output_tokens).toBeGreaterThan(0);
  expect(await usedTokens(origin, key.code)).toMatchObject({ used: input_tokens + output_tokens, reserved: 0 });
  return run;
}

describe("Claude Code with a prepaid key", () => {
  it("answers a prompt with a screenshot attached, the image priced in what the key is charged", async () => {
    const origin = stack().appUrl;
    const key = await buyPrepaidCode(payer().privateKey, { model: MODEL, tokens: 100_000 }, "/prepaid/codes", origin);
    const screenshot = encodePng(1024, 1024, (x, y) => [x % 256, y % 256, 90]);
    const run = await runClaudeCode({
      baseUrl: origin,
      authToken: key.code,
      model: MODEL,
      prompt: "What is in this screenshot?",
      images: [screenshot],
    });
    expect(run.exitCode, run.stdout + run.stderr).toBe(0);
    expect(run.json).toMatchObject({ type: "result", is_error: false });
    const { input_tokens, output_tokens } = run.json!.usage;
    // Claude Code's system prompt and tools, and the image's 765 tokens (OpenAI's tiles: the default catalog's).
    expect(input_tokens).toBeGreaterThan(1000 + 765);
    expect(await usedTokens(origin, key.code)).toMatchObject({ used: input_tokens + output_tokens, reserved: 0 });
  });

  it("answers through an OpenAI-compatible route, the key charged the usage it states", async () => {
    await claudeCodeOn(stack().appUrl);
  });

  it("answers through a route that speaks Messages natively, passed Claude Code's request as it came", async () => {
    await claudeCodeOn(native.url);
    const sent = native.messagesReceived().at(-1)!;
    expect(sent.messages!.path).toBe("/v1/messages");
    expect(sent.messages!.body).toMatchObject({ stream: true, thinking: expect.any(Object) });
  });
});
