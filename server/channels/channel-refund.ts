import { decodePaymentSignatureHeader, encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { channelChallenge, voucherRefusal } from "../billing/schemes/batch-settlement-scheme";
import { channelCharge } from "../billing/schemes/channel-voucher";
import { facilitatorUnavailable } from "../billing/x402-price";
import { ApiError } from "../core/errors";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { resourceUrl } from "../http/public-urls";
import { logEvent } from "../core/log";
import { describeMismatch } from "../payment/describe-mismatch";
import { FacilitatorUnavailableError } from "../payment/facilitator-answers";
import { payOutHeld, recordClaim, unclaimedOf, type ClaimServices } from "./channel-claims";
import type { ServiceConfig } from "../../config/service-config";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { Storage } from "../storage/storage";
import type { DeferredWrites } from "../lifecycle/deferred-writes";
import type { ServiceMetrics } from "../metrics/service-metrics";

/** What a refund works with: the configuration, the facilitators, the stores, the metrics, the channels. */
interface RefundContext {
  config: ServiceConfig;
  gateway: PaymentGateway;
  storage: Storage;
  writes: DeferredWrites;
  metrics: ServiceMetrics;
  channels: ClaimServices | undefined;
}

/**
 * A payer's cooperative refund of a batch-settlement channel (the official client's `refund(url)`): without a
 * payment, the 402 naming the deployment's channel terms; with a refund signed over the channel's last voucher, the
 * scheme verifies it, the facilitator claims what the channel was charged and returns the rest (or the amount
 * asked) to the payer in one transaction, and the charged rows it claimed become settled. The claim leaves the
 * charges in the contract, so a payout sends the pay-to what the contract holds for it before the answer (a payout
 * that fails is retried by the periodic claimer and on the way out). Nothing is charged.
 */
export async function refundChannel(context: RefundContext, request: ApiRequest): Promise<ApiAnswer> {
  const { gateway, config, storage } = context;
  const requirements = config.channels
    ? await gateway.channelRequirementsFor(0n).catch((error: unknown) => {
        throw facilitatorUnavailable(error);
      })
    : undefined;
  if (!requirements) {
    throw new ApiError("not_found", `This deployment offers no batch-settlement channels on ${config.network.id}`);
  }
  const description = "The refund of what a batch-settlement channel holds beyond its charges";
  const resource = { url: resourceUrl(config, request), description, mimeType: "application/json" };
  const document: PaymentRequired = { x402Version: 2, resource, accepts: [requirements] };
  const header = request.headers.get("payment-signature");
  if (!header) {
    return channelChallenge(
      document,
      "payment_required",
      "Sign a refund of your channel over its last voucher (the official client's refund(url) does) and repeat the request with PAYMENT-SIGNATURE; nothing is charged",
    );
  }
  let payload: PaymentPayload;
  try {
    payload = decodePaymentSignatureHeader(header);
  } catch (error) {
    const reason = (error as Error).message;
    return channelChallenge(document, "payment_invalid", `The PAYMENT-SIGNATURE header cannot be decoded: ${reason}`);
  }
  if ((payload.payload as { type?: unknown } | undefined)?.type !== "refund") {
    return channelChallenge(
      document,
      "payment_mismatch",
      "Only a channel's refund is taken here: a batch-settlement payload of type refund, with the channel's config and its last voucher",
    );
  }
  if (!gateway.matches(payload, requirements)) {
    return channelChallenge(document, "payment_mismatch", describeMismatch(payload.accepted, requirements));
  }
  const verdict = await gateway.verify(payload, requirements).catch((error: unknown) => {
    context.metrics.facilitatorFailed("verify");
    throw facilitatorUnavailable(error);
  });
  if (!verdict.isValid) return voucherRefusal(gateway, document, payload, verdict);
  const channelId = channelCharge(payload).channelId.toLowerCase();
  const before = await storage.channels.get(channelId);
  let settlement;
  try {
    settlement = await gateway.settle(payload, requirements, { verifiedBy: verdict.facilitator });
  } catch (error) {
    if (!(error instanceof FacilitatorUnavailableError)) throw error;
    context.metrics.facilitatorFailed("settle");
    logEvent("error", "channel_refund_unknown", { channel: channelId, error: error.message });
    throw new ApiError(
      "facilitator_unavailable",
      "The refund's outcome is unknown: the facilitator failed while sending it. Read your channel on chain before asking again.",
    );
  }
  // A refused refund: the client reads PAYMENT-RESPONSE's reason and does not retry.
  const paymentResponse = encodePaymentResponseHeader(settlement);
  if (!settlement.success) {
    const reason = settlement.errorReason ?? "refund_failed";
    const answer = channelChallenge(document, "payment_rejected", `Refund refused: ${reason}`);
    answer.headers["payment-response"] = paymentResponse;
    return answer;
  }
  const { transaction } = settlement;
  // The refund claimed the channel's charges on the way: their rows are settled by it.
  if (before && unclaimedOf(before) > 0n)
    await recordClaim({ ledger: storage.ledger, writes: context.writes }, before, transaction);
  const payout = context.channels && (await payOutHeld(context.channels));
  const asked = (payload.payload as { amount?: string }).amount;
  const refunded =
    asked ?? (before ? (BigInt(before.balance) - BigInt(before.chargedCumulativeAmount)).toString() : undefined);
  logEvent("info", "channel_refunded", {
    channel: channelId,
    refunded,
    transaction,
    payout: payout && { ...payout, amount: payout.amount.toString() },
  });
  return jsonAnswer(
    { object: "channel.refund", channel: channelId, payer: settlement.payer, refunded, transaction },
    { headers: { "PAYMENT-RESPONSE": paymentResponse, "Cache-Control": "no-store" } },
  );
}
