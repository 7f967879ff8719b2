import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { logEvent } from "../log";
import { FacilitatorUnavailableError, type Settlement, type Verdict } from "../payment/facilitator-answers";
import type { BillableCall, X402Services } from "./payment-method";
import type { PricedRequest } from "./x402-price";

/** A request paid from a channel: its call and price, the payment as decoded (the scheme knows it by this object). */
export interface ChannelCall extends X402Services {
  call: BillableCall;
  priced: PricedRequest;
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  verdict: Verdict;
}

/** The channel and the cumulative amount a channel payment's voucher signs for. */
export function channelCharge(payload: PaymentPayload): { channelId: string; maxClaimableAmount: string } {
  const voucher = (payload.payload as { voucher?: { channelId?: string; maxClaimableAmount?: string } }).voucher;
  return { channelId: voucher?.channelId ?? "", maxClaimableAmount: voucher?.maxClaimableAmount ?? "0" };
}

/**
 * Charges the channel `amount` (at most what the voucher allows): a voucher is committed to the channel's running
 * total in our database; a deposit is first settled on chain by the facilitator. Each charge becomes a ledger row
 * (`charged`, until a claim covers it), named by the channel and the running total after it, written beside the
 * answer. Undefined when the outcome is unknown (a deposit whose facilitator failed): nothing was committed to the channel.
 */
export async function recordChannelCharge(paid: ChannelCall, amount: bigint): Promise<Settlement | undefined> {
  const { gateway, ledger, writes, payload, requirements, verdict, call, priced } = paid;
  let settlement: Settlement;
  try {
    settlement = await gateway.settle(payload, requirements, { amount, verifiedBy: verdict.facilitator });
  } catch (error) {
    if (!(error instanceof FacilitatorUnavailableError)) throw error;
    logEvent("error", "channel_charge_unknown", { ...channelCharge(payload), error: error.message });
    return undefined;
  }
  if (!settlement.success || amount === 0n) return settlement;
  const { channelId } = channelCharge(payload);
  const state = (settlement.extra as { channelState?: { chargedCumulativeAmount?: string } } | undefined)?.channelState;
  const total = state?.chargedCumulativeAmount ?? channelCharge(payload).maxClaimableAmount;
  const row = { channel: channelId.toLowerCase(), total };
  // The charge is the channel's, committed above; its ledger row is a record written beside the answer (a draining
  // process waits for it).
  void paid.keep(
    writes.write("ledger_update", row, async () => {
      const id = await ledger.claim({
        nonce: `${channelId.toLowerCase()}:${total}`,
        payer: (settlement.payer ?? verdict.payer ?? "").toLowerCase(),
        amount: priced.amount,
        scheme: "batch-settlement",
        network: requirements.network,
        resource: call.resourceUrl,
        endpoint: call.endpoint,
        model: call.quote.model,
        bodyHash: call.body.sha256,
        paymentSignature: call.request.headers.get("payment-signature") ?? "",
        quoteMs: call.quoteMs,
      });
      if (id === undefined) return;
      const transaction = settlement.transaction || undefined;
      await ledger.update(id, {
        status: "charged",
        settledAmount: amount,
        facilitator: settlement.facilitator,
        transaction,
      });
    }),
  );
  return settlement;
}
