import type { HeldRequest } from "../../payment/paid-answers";
import { phase, type Timings } from "../phase";
import type { HeldExposure } from "./payer-exposure";
import type { DecodedPayment } from "../../payment/payment-signature";
import type { facilitatorTerms } from "../../payment/x402-v1";
import type { BillableCall, Verified, X402Services } from "../payment-method";
import type { AcceptedPayment, PaymentScheme, Taking } from "./payment-scheme";
import { chargedOnUsage, settledBeforeAnswer, settledWhileStreaming, type SettlementMode } from "../settlements";
import { takingOf } from "./taking";

/** A payment signed for one call (exact, upto): claimed in the ledger by its nonce, verified, then settled once. */
export interface SignedPaymentStart {
  services: X402Services;
  call: BillableCall;
  scheme: PaymentScheme;
  payment: DecodedPayment;
  /** The payment's ledger row, claimed by its nonce before anyone else saw it. */
  paymentId: number;
  /** What the facilitator settles: the payload with the requirements of its version. */
  terms: ReturnType<typeof facilitatorTerms>;
  verdict: Promise<Verified>;
  overlapped: boolean;
  identifier: HeldRequest | undefined;
  /** Its maximum, held against what its payer can pay until it is taken (payer-exposure.ts). */
  hold?: HeldExposure;
}

/**
 * An `exact` or `upto` payment: taken by the facilitator that verified it (failing over as the gateway's rules
 * allow), `upto` for the amount charged, `exact` for its price; each outcome is an update of its ledger row.
 */
export class SignedPayment implements AcceptedPayment {
  readonly scheme;
  readonly payer;
  readonly nonce;
  readonly version;
  readonly verdict;
  readonly settles: SettlementMode;
  readonly deadline;
  readonly identifier;
  private held: Promise<void> | undefined;

  constructor(private readonly start: SignedPaymentStart) {
    ({ scheme: this.scheme, verdict: this.verdict, identifier: this.identifier } = start);
    // Charged its use (upto): on its usage; at its price, a stream passed on while it settles where the work started
    // before the verdict (overlap order); else before the answer leaves.
    this.settles = start.scheme.chargesUse
      ? chargedOnUsage
      : start.overlapped
        ? settledWhileStreaming
        : settledBeforeAnswer;
    ({ payer: this.payer, nonce: this.nonce, version: this.version, deadline: this.deadline } = start.payment);
    // A payment refused while the work ran is never taken: its hold ends with the verdict.
    this.verdict.catch(() => this.endHold());
  }

  /**
   * Ends the payer's hold on this payment's maximum, once: it is taken (or will never be). A database away leaves
   * the hold to expire by itself.
   */
  private endHold(): Promise<void> {
    this.held ??= this.start.hold ? this.start.hold.release().catch(() => undefined) : Promise.resolve();
    return this.held;
  }

  async take(amount: bigint): Promise<Taking> {
    try {
      return await this.settle(amount);
    } finally {
      await this.endHold();
    }
  }

  private async settle(amount: bigint): Promise<Taking> {
    const { gateway, metrics } = this.start.services;
    const { facilitator } = await this.verdict;
    const { payload, requirements } = this.start.terms;
    const timings: Timings = {};
    // What this settlement takes is all the payer's funds must still cover for it (an upto payment's use, not its
    // maximum): its other payments may count on the rest at once, whether or not it has landed when they read them.
    const { chargesUse } = this.start.scheme;
    if (chargesUse) await this.start.hold?.lower(amount).catch(() => undefined);
    try {
      const settlement = await phase(
        timings,
        "settle",
        (span) =>
          gateway.settle(payload, requirements, {
            amount: chargesUse ? amount : undefined,
            verifiedBy: facilitator,
            payment: this.start.payment,
            span,
          }),
        { parent: this.start.call.request.trace?.span },
      );
      return takingOf(settlement, timings.settle!);
    } catch (error) {
      metrics.facilitatorFailed("settle");
      const named = (error as { facilitator?: string }).facilitator;
      return { kind: "unknown", reason: (error as Error).message, facilitator: named, settleMs: timings.settle! };
    }
  }

  /**
   * The row says what taking came to: settled (the transfer is on chain), settle_unknown (with the amount it was
   * asked to move and the transaction when known, for reconciliation), unpaid (a stream passed on while its payment
   * was refused: what it delivered) or failed.
   */
  async record(amount: bigint, taking: Taking, upstreamMs: number, unpaid?: bigint): Promise<void> {
    const { settleMs } = taking;
    const times = { upstreamMs, settleMs };
    if (taking.kind === "taken") {
      const { transaction, facilitator } = taking.settlement;
      return this.update("settled", transaction, { transaction, facilitator, settledAmount: amount, ...times });
    }
    const { reason: failureReason, facilitator } = taking;
    if (taking.kind === "unknown") {
      const { transaction } = taking;
      const update = { failureReason, transaction, facilitator, settledAmount: amount, ...times };
      return this.update("settle_unknown", transaction, update);
    }
    if (unpaid === undefined) return this.update("failed", undefined, { failureReason, facilitator, ...times });
    await this.update("unpaid", undefined, { failureReason, unpaidAmount: unpaid, facilitator, ...times });
    this.start.services.metrics.deliveredUnpaid(this.start.call.endpoint, this.start.call.quote.model, unpaid);
  }

  async release(reason: string, upstreamMs: number): Promise<void> {
    await this.endHold();
    await this.update("not_charged", undefined, { failureReason: reason, upstreamMs });
  }

  /** One update of the payment's row, as a record of what happened: a database away delays it. */
  private async update(
    status: "settled" | "settle_unknown" | "unpaid" | "failed" | "not_charged",
    transaction: string | undefined,
    fields: Omit<Parameters<X402Services["ledger"]["update"]>[1], "status">,
  ): Promise<void> {
    const { paymentId, services } = this.start;
    await services.writes.write("ledger_update", { paymentId, status, transaction }, () =>
      services.ledger.update(paymentId, { status, ...fields }),
    );
  }
}
