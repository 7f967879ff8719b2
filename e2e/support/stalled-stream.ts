import OpenAI from "openai";
import { expect } from "vitest";

/**
 * A prepaid stream whose provider goes silent halfway, its first chunk read and the rest left open: a call that runs
 * as long as a test wants, holding its reservation.
 */
export async function stalledStream(url: string, code: string) {
  const stream = await new OpenAI({ apiKey: code, baseURL: `${url}/v1`, maxRetries: 0 }).chat.completions.create({
    model: "vendor-a/gpt-6-luna",
    messages: [{ role: "user", content: "[paysvc-dev-fault:stall-mid-stream] tell a long story" }],
    max_tokens: 2000,
    stream: true,
  });
  const iterator = stream[Symbol.asyncIterator]();
  expect((await iterator.next()).done).toBe(false);
  return {
    /** Reads on until the stream ends (or fails, when its server is gone). */
    readToEnd: async () => {
      while (!(await iterator.next()).done);
    },
    /** Whatever the reads end in once the test stops reading. */
    close: () => void iterator.return?.().catch(() => undefined),
  };
}
