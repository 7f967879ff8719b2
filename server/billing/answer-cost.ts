import { usageOnlyChunkUsage } from "../chat/chat-wire";
import { atomicToDecimal } from "../core/money";
import type { CallTrace } from "../tracing/call-trace";
import type { X402Price } from "./payment-method";

/** What an answer says it cost: fields appended to its `usage` object, and headers for a whole answer. */
export interface AnswerCost {
  usage: Record<string, unknown>;
  headers: Record<string, string>;
}

export const COST_HEADER = "X-Paysvc-Cost";
export const PREPAID_REMAINING_HEADER = "X-Paysvc-Prepaid-Remaining";

/**
 * An x402 answer: the settled amount (the quoted price, which the exact scheme settles to the unit) and, once
 * settled, the transaction; `transaction: null` while the settlement's outcome is unknown. The transaction is in the
 * body because the official SDK hands callers the body; header readers have it in PAYMENT-RESPONSE already.
 */
export function x402Cost(price: X402Price, transaction: string | undefined, trace?: CallTrace): AnswerCost {
  const cost = atomicToDecimal(price.amount, price.decimals);
  trace?.note({ cost });
  return {
    usage: { cost, cost_details: { network: price.network, transaction: transaction ?? null } },
    headers: { [COST_HEADER]: cost },
  };
}

/**
 * A prepaid answer: what the tokens charged are worth at the key's price (atomic units), the tokens charged, and
 * the tokens the key has left after this call (left out when the charge waits for the database).
 */
export function prepaidCost(
  charge: { amount: bigint; decimals: number; chargedTokens: number; remainingTokens: number | undefined },
  trace?: CallTrace,
): AnswerCost {
  const cost = atomicToDecimal(charge.amount, charge.decimals);
  trace?.note({ cost });
  const { chargedTokens, remainingTokens } = charge;
  const usage: Record<string, unknown> = { cost, prepaid_charged_tokens: chargedTokens };
  const headers: Record<string, string> = { [COST_HEADER]: cost };
  if (remainingTokens !== undefined) {
    usage.prepaid_remaining_tokens = remainingTokens;
    headers[PREPAID_REMAINING_HEADER] = String(remainingTokens);
  }
  return { usage, headers };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A JSON answer with the cost appended to its `usage` object, every other field as it was. An answer without one
 * (images, a prepaid key's purchase, a completion whose upstream reported no usage) is left as it is: a usage object
 * holding only the cost would not be the shape OpenAI's clients expect there, so it says its cost in the headers.
 */
export function withUsageCost(body: unknown, fields: Record<string, unknown>, trace?: CallTrace): unknown {
  if (!isRecord(body) || !isRecord(body.usage)) return body;
  noteUsage(body.usage, trace);
  return { ...body, usage: { ...body.usage, ...fields } };
}

/**
 * The usage object of a stream's final usage event, or undefined: the usage-only chunk that ends every canonical
 * chat stream (a `usage` object, `choices: []`; chat/chat-wire.ts). Chunks that carry usage beside their choices
 * (some providers repeat a running count) are not the final one.
 */
export function finalUsageOf(event: unknown): Record<string, unknown> | undefined {
  return usageOnlyChunkUsage(event);
}

/** The output tokens an answer's usage reports, noted on the request's trace (tracing/call-trace.ts). */
export function noteUsage(usage: Record<string, unknown>, trace: CallTrace | undefined): void {
  const outputTokens = usage.completion_tokens;
  if (trace && typeof outputTokens === "number") trace.note({ outputTokens });
}
