import type { SettleResponse } from "@x402/core/types";
import { STREAM_USAGE_GRACE_MS } from "../../config/limits";
import type { EventStream } from "../http/event-stream";
import { x402Cost, type AnswerCost } from "./answer-cost";
import { meteredStream } from "./metered-stream";
import { recordSettled, recordSettleUnknown, type StreamPayment } from "./stream-settlement";
import { reportedOutputTokens, withStreamUsageCost } from "./stream-usage-cost";

/** What an `upto` stream's settlement works with: its verified payment, and how its session charges. */
export interface UptoStreamPayment extends StreamPayment {
  network: string;
  /** What the call costs for the output tokens it used (the most it may cost when they are unknown). */
  charge(outputTokens: number | undefined): bigint;
}

/**
 * An `upto` stream, settled on its usage as it passes: when its usage event arrives (before that event, the last
 * ones and `[DONE]` are sent, so the event states the cost and the transaction), or when it ends: the output the
 * meter counted (stream-meter.ts: the usage reported; without it, the cap for a stream the upstream completed, the
 * text passed on for one cut short), nothing when it passed no output. A caller who leaves is charged what the
 * upstream reports within the grace that follows. The settlement's outcome is the ledger's and the metrics'; a
 * refused or unknown one is recorded with its amount and left to reconciliation, the stream delivered.
 */
export function settledOnUsage(body: EventStream, payment: UptoStreamPayment): EventStream {
  const usage = payment.call.usage!;
  let settled: Promise<AnswerCost | undefined> | undefined;
  const settle = (outputTokens: number) => (settled ??= settleUsage(payment, outputTokens));
  const metered = meteredStream(body, usage.streamMeter(payment.call.quote.tokens!.maxOutput), {
    charge: async (outputTokens) => void (await settle(outputTokens)),
    release: async () => void (await (settled ??= settleNothing(payment))),
    graceMs: STREAM_USAGE_GRACE_MS,
  });
  return withStreamUsageCost(metered, async (reported) => {
    const outputTokens = reportedOutputTokens(reported, usage.fromJson);
    if (outputTokens === undefined) return undefined;
    return (await settle(outputTokens))?.usage;
  });
}

/** Settles the usage: what the answer cost, with the transaction once known; undefined when refused. */
async function settleUsage(payment: UptoStreamPayment, outputTokens: number): Promise<AnswerCost | undefined> {
  const { gateway, metrics } = payment.services;
  const amount = payment.charge(outputTokens);
  const price = { amount, network: payment.network, decimals: gateway.network.usdc.decimals };
  const started = performance.now();
  let settlement: SettleResponse;
  try {
    settlement = await gateway.settle(payment.terms.payload, payment.terms.requirements, amount);
  } catch (error) {
    metrics.facilitatorFailed("settle");
    await recordSettleUnknown(payment, amount, (error as Error).message, undefined, performance.now() - started);
    return x402Cost(price, undefined);
  }
  const settleMs = performance.now() - started;
  if (settlement.success) {
    await recordSettled(payment, amount, settlement.transaction, settleMs);
    return x402Cost(price, settlement.transaction);
  }
  metrics.facilitatorFailed("settle");
  // Delivered either way: a pending transfer may land, a refused one may be settled again by reconciliation.
  const reason = settlement.errorReason ?? "settlement_failed";
  await recordSettleUnknown(payment, amount, reason, settlement.transaction, settleMs);
  const pending = settlement.errorReason === "settlement_pending" && settlement.transaction;
  return pending ? x402Cost(price, undefined) : undefined;
}

/** A stream that passed no output: nothing is settled. */
async function settleNothing(payment: UptoStreamPayment): Promise<undefined> {
  await payment.services.ledger.update(payment.paymentId, {
    status: "not_charged",
    failureReason: "no_output",
    upstreamMs: payment.upstreamMs,
  });
  payment.log("not_charged", "no_output");
  return undefined;
}
