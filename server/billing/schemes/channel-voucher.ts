import { randomUUID } from "node:crypto";
import { phase, type Timings } from "../phase";
import type { PaymentPayload } from "@x402/core/types";
import { logEvent } from "../../core/log";
import { FacilitatorUnavailableError, type Verdict } from "../../payment/facilitator-answers";
import type { Verified } from "../payment-method";
import type { Acceptance, AcceptedPayment, PaymentScheme, Taking } from "./payment-scheme";
import { holdChannel } from "./channel-hold";
import { paymentRow, takingOf } from "./taking";
import { chargedOnUsage } from "../settlements";

/** How long the scheme reserves a channel for one request: the payment's timeout, within 5 s and 10 minutes. */
const reservationLifetimeMs = (maxTimeoutSeconds: number) =>
  Math.min(600_000, Math.max(5_000, maxTimeoutSeconds * 1000));

/** The channel and the cumulative amount a channel payment's voucher signs for. */
export function channelCharge(payload: PaymentPayload): { channelId: string; maxClaimableAmount: string } {
  const voucher = (payload.payload as { voucher?: { channelId?: string; maxClaimableAmount?: string } }).voucher;
  return { channelId: voucher?.channelId ?? "", maxClaimableAmount: voucher?.maxClaimableAmount ?? "0" };
}

/** A voucher the scheme accepted, its channel held for this request. */
export interface VoucherStart extends Acceptance {
  scheme: PaymentScheme;
  payload: PaymentPayload;
  verdict: Verdict;
  verified: Verified;
  /** A deposit paid with a stream: its amount held against the payer's balance until it is taken (payer-exposure.ts). */
  hold?: { release(): Promise<void> };
}

/**
 * A request paid from a channel: taking commits the charge to the channel's running total in our database (a
 * deposit is first settled on chain by the facilitator); releasing lets the channel go, nothing charged. Each
 * charge becomes a ledger row (`charged`, until a claim covers it), named by the channel and its running total.
 */
export class ChannelVoucher implements AcceptedPayment {
  readonly scheme;
  readonly payer;
  readonly nonce;
  readonly version = 2;
  readonly verdict;
  /** Charged what the answer used, committed to the channel's running total. */
  readonly settles = chargedOnUsage;
  /** The channel held for this request while its answer is passed on (channel-hold.ts). */
  private readonly held: { stop(): void } | undefined;

  constructor(private readonly start: VoucherStart) {
    const { payload, verdict } = start;
    const channel = (payload.payload as { channelConfig?: { payer?: string } }).channelConfig;
    this.scheme = start.scheme;
    this.payer = (verdict.payer ?? channel?.payer ?? "").toLowerCase();
    this.nonce = channelCharge(payload).channelId.toLowerCase();
    this.verdict = Promise.resolve(start.verified);
    const scheme = start.services.channels;
    if (scheme) this.held = holdChannel(scheme, payload, reservationLifetimeMs(start.offered.maxTimeoutSeconds));
  }

  async take(amount: bigint): Promise<Taking> {
    try {
      return await this.charge(amount);
    } finally {
      this.held?.stop();
      await this.start.hold?.release().catch(() => undefined);
    }
  }

  private async charge(amount: bigint): Promise<Taking> {
    const { services, payload, offered, verdict } = this.start;
    const timings: Timings = {};
    try {
      const settlement = await phase(
        timings,
        "settle",
        (span) => services.gateway.settle(payload, offered, { amount, verifiedBy: verdict.facilitator, span }),
        { parent: this.start.call.request.trace?.span },
      );
      return takingOf(settlement, timings.settle!);
    } catch (error) {
      if (!(error instanceof FacilitatorUnavailableError)) throw error;
      services.metrics.facilitatorFailed("settle");
      // A deposit whose facilitator failed: nothing was committed to the channel, so nothing is delivered for it.
      return { kind: "refused", reason: "settlement_unknown", message: error.message, settleMs: timings.settle! };
    }
  }

  /**
   * A charge's ledger row, from the running total the channel committed; a charge not taken is logged, and one
   * refused after its stream went out (`unpaid`) is a debt on record, under its channel and a nonce of its own.
   */
  async record(amount: bigint, taking: Taking, upstreamMs: number, unpaid?: bigint): Promise<void> {
    const { services, payload } = this.start;
    if (taking.kind !== "taken") {
      const trace_id = this.start.call.request.trace?.span.traceId;
      logEvent("warn", "channel_charge_not_taken", { channel: this.nonce, reason: taking.reason, trace_id });
      if (unpaid !== undefined && unpaid > 0n) await this.recordUnpaid(unpaid, taking.reason, upstreamMs);
      return;
    }
    if (amount === 0n) return;
    const { settlement } = taking;
    const state = (settlement.extra as { channelState?: { chargedCumulativeAmount?: string } } | undefined)
      ?.channelState;
    const total = state?.chargedCumulativeAmount ?? channelCharge(payload).maxClaimableAmount;
    const { ledger, writes } = services;
    await writes.write("ledger_update", { channel: this.nonce, total }, async () => {
      const payer = (settlement.payer ?? this.payer).toLowerCase();
      const row = { nonce: `${this.nonce}:${total}`, payer, scheme: "batch-settlement" as const };
      const id = await ledger.claim(paymentRow(this.start, row));
      if (id === undefined) return;
      const transaction = settlement.transaction || undefined;
      await ledger.update(id, {
        status: "charged",
        settledAmount: amount,
        facilitator: settlement.facilitator,
        transaction,
      });
    });
  }

  /** A stream's refused charge, as the ledger's `unpaid` row: counted, reported, and its payer served settled-first. */
  private async recordUnpaid(unpaid: bigint, reason: string, upstreamMs: number): Promise<void> {
    const { ledger, writes, metrics } = this.start.services;
    const nonce = `${this.nonce}:unpaid:${randomUUID()}`;
    await writes.write("ledger_update", { channel: this.nonce, unpaid: unpaid.toString() }, async () => {
      const id = await ledger.claim(paymentRow(this.start, { nonce, payer: this.payer, scheme: "batch-settlement" }));
      if (id === undefined) return;
      await ledger.update(id, { status: "unpaid", unpaidAmount: unpaid, failureReason: reason, upstreamMs });
    });
    metrics.deliveredUnpaid(this.start.call.endpoint, this.start.call.quote.model, unpaid);
  }

  /** The channel is let go of: the work failed, or its stream passed nothing on. */
  async release(reason: string): Promise<void> {
    this.held?.stop();
    await this.start.hold?.release().catch(() => undefined);
    const { services, payload, offered, verdict } = this.start;
    const route = services.gateway.route(verdict.facilitator)!;
    await route.cancel(payload, offered, reason === "work_failed" ? "handler_threw" : "handler_failed");
  }
}
