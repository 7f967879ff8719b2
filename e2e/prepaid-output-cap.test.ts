import { describe, expect, it } from "vitest";
import { buyPrepaidCode, postJson, stack, type PrepaidCode } from "./support/payments";

/**
 * A coding agent asks for the same large output cap on every turn (Claude Code: max_tokens 32000). A prepaid call
 * whose key has less left than its input plus that cap is served with the cap lowered to what remains, and refused
 * only when not even its input fits: the key is never overspent.
 */
const payer = () => stack().payers[6]!;
const model = "vendor-a/gpt-6-luna";

async function remaining(key: PrepaidCode): Promise<number> {
  const response = await fetch(`${key.api_base}/prepaid/status`, { headers: { authorization: `Bearer ${key.code}` } });
  return ((await response.json()) as { tokens: { remaining: number } }).tokens.remaining;
}

/** Some 1,000 tokens a line: `lines` of them make an input of about lines x 1,000 tokens. */
const filler = (lines: number) => Array.from({ length: lines }, (_, line) => `${line} ${"lorem ".repeat(999)}`);

/** Each dialect's body for `text` with a 32,000-token cap, and how its answer states the tokens it used. */
const dialects = {
  chat: {
    path: "/v1/chat/completions",
    body: (text: string, cap: number) => ({ model, messages: [{ role: "user", content: text }], max_tokens: cap }),
    usage: (answer: { usage: { prompt_tokens: number; completion_tokens: number } }) => ({
      input: answer.usage.prompt_tokens,
      output: answer.usage.completion_tokens,
    }),
  },
  responses: {
    path: "/v1/responses",
    body: (text: string, cap: number) => ({ model, input: text, max_output_tokens: cap }),
    usage: (answer: { usage: { input_tokens: number; output_tokens: number } }) => ({
      input: answer.usage.input_tokens,
      output: answer.usage.output_tokens,
    }),
  },
  // Claude Code's turn: max_tokens 32000 whatever the key holds.
  messages: {
    path: "/v1/messages",
    body: (text: string, cap: number) => ({ model, messages: [{ role: "user", content: text }], max_tokens: cap }),
    usage: (answer: { usage: { input_tokens: number; output_tokens: number } }) => ({
      input: answer.usage.input_tokens,
      output: answer.usage.output_tokens,
    }),
  },
};

describe("a prepaid call asking for more output than its key holds", () => {
  for (const [name, dialect] of Object.entries(dialects)) {
    it(`${name}: is served with the cap lowered to what remains, then refused when not even the input fits`, async () => {
      const key = await buyPrepaidCode(payer().privateKey, { model, tokens: 100_000 });
      const call = (text: string, cap: number) =>
        postJson(
          dialect.path,
          dialect.body(text, cap),
          { authorization: `Bearer ${key.code}` },
          key.api_base.replace(/\/v1$/, ""),
        );

      // Spend 60,000 of the 100,000 tokens: about 40,000 of input and 20,000 of output.
      const first = await call(`[paysvc-dev-long] ${filler(40).join("\n")}`, 20_000);
      expect(first.status).toBe(200);
      const left = await remaining(key);
      expect(left).toBeGreaterThan(32_000);
      expect(left).toBeLessThan(52_000);

      // About 20,000 tokens of input and a 32,000-token cap: more than the key holds.
      const second = await call(`[paysvc-dev-long] ${filler(20).join("\n")}`, 32_000);
      expect(second.status).toBe(200);
      expect(second.headers.get("x-prepaid-max-tokens-lowered-from")).toBe("32000");
      const used = dialect.usage(await second.json());
      expect(used.input).toBeGreaterThan(19_000);
      expect(used.output).toBe(left - used.input);
      expect(Number(second.headers.get("x-prepaid-max-tokens"))).toBe(left - used.input);
      expect(await remaining(key)).toBe(0);

      const third = await call("one more", 32_000);
      expect(third.status).toBe(429);
      expect(await remaining(key)).toBe(0);
    });
  }

  it("is refused, nothing charged, when the input alone is more than the key holds", async () => {
    const key = await buyPrepaidCode(payer().privateKey, { model, tokens: 100_000 });
    const response = await postJson(
      "/v1/chat/completions",
      dialects.chat.body(filler(110).join("\n"), 32_000),
      { authorization: `Bearer ${key.code}` },
      key.api_base.replace(/\/v1$/, ""),
    );
    expect(response.status).toBe(429);
    expect(await remaining(key)).toBe(100_000);
  });
});
