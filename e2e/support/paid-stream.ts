import { expect } from "vitest";
import { decimalToAtomic } from "../../server/core/money";

/** What one paid stream came to: served (with the cost its usage event stated) or refused (status and code). */
export type StreamOutcome = { served: true; cost: bigint } | { served: false; status: number; code: string };

/**
 * One chat stream through a paying fetch (the official x402 fetch wrapper): its whole text read, and the cost its
 * usage event states (the request asks for `stream_options.include_usage`).
 */
export async function paidStream(pay: typeof fetch, url: string, request: unknown): Promise<StreamOutcome> {
  const response = await pay(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
  });
  const text = await response.text();
  if (response.status !== 200) {
    return {
      served: false,
      status: response.status,
      code: (JSON.parse(text) as { error: { code: string } }).error.code,
    };
  }
  expect(text).toContain("data: [DONE]");
  const usage = text
    .split("\n")
    .filter((line) => line.startsWith("data: {"))
    .map((line) => JSON.parse(line.slice(6)) as { usage?: { cost?: string } })
    .find((chunk) => chunk.usage)?.usage;
  expect(usage?.cost).toBeDefined();
  return { served: true, cost: decimalToAtomic(usage!.cost!, 6) };
}

/** What the served streams' usage events stated, added up. */
export const statedCost = (outcomes: StreamOutcome[]) =>
  outcomes.reduce((sum, outcome) => sum + (outcome.served ? outcome.cost : 0n), 0n);
