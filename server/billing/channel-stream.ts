import { STREAM_USAGE_GRACE_MS } from "../../config/limits";
import type { EventStream } from "../http/event-stream";
import { x402Cost, type AnswerCost } from "./answer-cost";
import { recordChannelCharge, type ChannelCall } from "./channel-charge";
import { meteredStream } from "./metered-stream";
import { reportedOutputTokens, withStreamUsageCost } from "./stream-usage-cost";

/**
 * A stream paid from a channel, charged once as it passes, as an `upto` stream settles: at its usage event (which
 * then states the charge), or at its end for the output the meter counted; a stream that passed no output lets the
 * channel go, nothing charged.
 */
export function channelStream(
  body: EventStream,
  paid: ChannelCall & { charge(outputTokens: number | undefined): bigint },
): EventStream {
  const usage = paid.call.usage!;
  let charged: Promise<AnswerCost | undefined> | undefined;
  const charge = (outputTokens: number) => (charged ??= chargeStream(paid, paid.charge(outputTokens)));
  const meter = usage.streamMeter(paid.call.quote.tokens!.maxOutput);
  const metered = meteredStream(body, meter, {
    charge: async (outputTokens) => void (await charge(outputTokens)),
    release: async () => void (await (charged ??= release(paid))),
    graceMs: STREAM_USAGE_GRACE_MS,
  });
  return withStreamUsageCost(metered, async (reported) => {
    const outputTokens = reportedOutputTokens(reported, usage.fromJson);
    if (outputTokens === undefined) return undefined;
    return (await charge(outputTokens))?.usage;
  });
}

async function chargeStream(paid: ChannelCall, amount: bigint): Promise<AnswerCost | undefined> {
  const settlement = await recordChannelCharge(paid, amount);
  if (!settlement?.success) return undefined;
  const price = { amount, network: paid.requirements.network, decimals: paid.gateway.network.usdc.decimals };
  return x402Cost(price, settlement.transaction || undefined);
}

/** Nothing passed on: the channel is let go of, nothing charged. */
async function release(paid: ChannelCall): Promise<undefined> {
  await paid.gateway.route(paid.verdict.facilitator)!.cancel(paid.payload, paid.requirements, "handler_failed");
  return undefined;
}
