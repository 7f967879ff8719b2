import type { SettleResponse } from "@x402/core/types";
import { ApiError } from "../errors";
import type { ApiAnswer } from "../http/api-answer";
import { logEvent } from "../log";
import type { DecodedPayment } from "../payment/payment-signature";
import type { facilitatorTerms } from "../payment/x402-v1";
import { UpstreamError } from "../upstream/upstream-error";
import { usedTokensCharge } from "../pricing/used-tokens-charge";
import { settledOnUsage } from "./upto-stream-settlement";
import { requestKey } from "./paid-retries";
import type { BillableCall, Finished, PreparedAnswer, X402Services } from "./payment-method";
import { paidAnswer, paymentChallenge, paymentRequiredDocument } from "./x402-challenge";
import type { PricedRequest } from "./x402-price";

export type Timings = { quote: number; verify: number; upstream: number; settle: number; total: number };

/** What a session starts from: the verified payment, what it pays for, and how long getting here took. */
export interface SessionStart {
  services: X402Services;
  call: BillableCall;
  payment: DecodedPayment;
  /** The payment's ledger row. */
  paymentId: number;
  priced: PricedRequest;
  /** What the facilitator settles: the payload with the requirements of its version. */
  terms: ReturnType<typeof facilitatorTerms>;
  verifyMs: number;
  /** When the billing of the call began (performance.now()). */
  entered: number;
  /** The caller's payment-identifier: a whole answer is kept under it for a retry. */
  paymentIdentifier: string | undefined;
}

/** One verified payment, from the work's start to its settlement. */
export class X402Session {
  readonly grant;
  private readonly services: X402Services;
  private readonly call: BillableCall;
  private readonly payment: DecodedPayment;
  private readonly paymentId: number;
  private readonly priced: PricedRequest;
  private readonly terms: ReturnType<typeof facilitatorTerms>;
  private readonly entered: number;
  private readonly paymentIdentifier: string | undefined;
  /** Each phase's time, written by this session only, for Server-Timing, the ledger and the metrics. */
  private readonly timings: Timings;
  private readonly workStarted = performance.now();

  constructor(start: SessionStart) {
    ({
      services: this.services,
      call: this.call,
      payment: this.payment,
      paymentId: this.paymentId,
      priced: this.priced,
      terms: this.terms,
      entered: this.entered,
      paymentIdentifier: this.paymentIdentifier,
    } = start);
    this.timings = { quote: start.call.quoteMs, verify: start.verifyMs, upstream: 0, settle: 0, total: 0 };
    const outputCap = start.call.quote.tokens?.maxOutput ?? 0;
    const { nonce, payer } = start.payment;
    // An upto stream is settled on its usage, so the work asks the upstream for it (hidden if not wanted).
    const usageRequired = start.terms.requirements.scheme === "upto";
    this.grant = { outputCap, usageRequired, payment: { nonce, payer } };
  }

  failed = async (error: unknown): Promise<unknown> => {
    const { timings } = this;
    timings.upstream = performance.now() - this.workStarted;
    const reason = error instanceof UpstreamError ? `upstream_${error.failure}` : "work_failed";
    await this.services.ledger.update(this.paymentId, {
      status: "not_charged",
      failureReason: reason,
      upstreamMs: timings.upstream,
    });
    this.log("not_charged", reason);
    if (!(error instanceof UpstreamError)) return error;
    return new ApiError("upstream_error", `The model provider failed (${error.message}); your payment was not settled`);
  };

  finish = async (answer: PreparedAnswer): Promise<Finished> => {
    if (answer.kind === "stream" && this.terms.requirements.scheme === "upto") return this.finishUptoStream(answer);
    const { timings, paymentId } = this;
    const { ledger, gateway } = this.services;
    // What every answer built below says it cost, settled or not: what this payment settles.
    const amount = this.settlementAmount(answer);
    const price = { amount, network: this.priced.requirements.network, decimals: gateway.network.usdc.decimals };
    answer = { ...answer, price };
    timings.upstream = performance.now() - this.workStarted;
    const started = performance.now();
    let settlement: SettleResponse;
    try {
      const { payload, requirements } = this.terms;
      settlement = await gateway.settle(payload, requirements, requirements.scheme === "upto" ? amount : undefined);
    } catch (error) {
      timings.settle = performance.now() - started;
      this.services.metrics.facilitatorFailed("settle");
      return this.outcomeUnknown(answer, amount, (error as Error).message);
    }
    timings.settle = performance.now() - started;
    // Broadcast but not confirmed (the x402 server already asked once more): the transfer may still land.
    if (!settlement.success && settlement.errorReason === "settlement_pending" && settlement.transaction) {
      return this.outcomeUnknown(answer, amount, "settlement_pending", settlement.transaction);
    }
    if (!settlement.success) return this.unsettled(answer, settlement);
    const { transaction } = settlement;
    const record = async () => {
      try {
        await ledger.update(paymentId, {
          status: "settled",
          transaction,
          settledAmount: amount,
          upstreamMs: timings.upstream,
          settleMs: timings.settle,
        });
      } catch (error) {
        // The transfer is on chain and the work delivered; the row stays "verified" for reconciliation.
        logEvent("error", "ledger_update_failed", { paymentId, transaction, error: (error as Error).message });
      }
      this.log("settled", undefined, transaction, amount);
    };
    timings.total = this.sinceEntry();
    // The payment is settled: a whole answer goes out before the ledger records it (the nonce was claimed before
    // verify, so recording later cannot let it be used twice); a stream's answer waits for the record.
    if (answer.kind === "stream") await record();
    const paid = paidAnswer(answer, settlement, timings, answer.kind === "json" ? () => void record() : undefined);
    return this.finished(paid, "paid", amount);
  };

  /** An `upto` stream goes out at once, settled on its usage as it passes (upto-stream-settlement.ts). */
  private finishUptoStream(answer: Extract<PreparedAnswer, { kind: "stream" }>): Promise<Finished> {
    const { timings } = this;
    timings.upstream = performance.now() - this.workStarted;
    const body = settledOnUsage(answer.stream.body, {
      services: this.services,
      call: this.call,
      terms: this.terms,
      paymentId: this.paymentId,
      network: this.priced.requirements.network,
      upstreamMs: timings.upstream,
      charge: (outputTokens) => this.usedAmount(outputTokens),
      log: (outcome, reason, transaction, settled) => this.log(outcome, reason, transaction, settled),
    });
    // Its cost is not known when the headers leave: no X-Paysvc-Cost and no PAYMENT-RESPONSE, the cost is stated in
    // the final usage event.
    const streamed = paidAnswer({ ...answer, stream: { ...answer.stream, body } }, undefined, timings);
    timings.total = this.sinceEntry();
    return this.finished(streamed, "paid");
  }

  /**
   * What the payment settles: its price (`exact`); for `upto`, the tokens the answer used at their price (the
   * whole maximum when the answer does not say how many it wrote).
   */
  private settlementAmount(answer: PreparedAnswer): bigint {
    if (this.terms.requirements.scheme !== "upto" || !this.call.quote.tokens || answer.kind !== "json") {
      return this.priced.amount;
    }
    return this.usedAmount(this.call.usage?.fromJson(answer.body));
  }

  /** An upto call's charge for the output tokens it used (the maximum when unknown). */
  private usedAmount(outputTokens: number | undefined): bigint {
    const { tokens, amount: quoted } = this.call.quote;
    const maximum = this.priced.amount;
    return usedTokensCharge({ tokens: tokens!, quoted, maximum, outputTokens, network: this.services.gateway.network });
  }

  private async finished(answer: ApiAnswer, outcome: Finished["outcome"], settled?: bigint): Promise<Finished> {
    // v1 clients read the settlement from X-PAYMENT-RESPONSE (same encoding); PAYMENT-RESPONSE stays for all.
    const settlement = answer.headers["payment-response"];
    if (this.payment.version === 1 && settlement) answer.headers["x-payment-response"] = settlement;
    const delivered = outcome === "paid" || outcome === "settle_unknown";
    if (delivered && this.paymentIdentifier) {
      const { payer, nonce } = this.payment;
      const request = requestKey(this.call.resourceUrl, this.call.body.sha256);
      await this.services.retries.keep(answer, { payer, paymentId: this.paymentIdentifier, nonce, request });
    }
    return { answer, outcome, payment: "x402", timings: this.timings, settledAmount: settled };
  }

  /**
   * The facilitator may or may not have settled (it timed out, or the transfer is still pending). The work is done:
   * deliver it rather than risk a payer paying for nothing, and leave the row, with the transaction when one is
   * known, for reconciliation against the chain.
   */
  private async outcomeUnknown(
    answer: PreparedAnswer,
    amount: bigint,
    reason: string,
    transaction?: string,
  ): Promise<Finished> {
    const { timings } = this;
    await this.services.ledger.update(this.paymentId, {
      status: "settle_unknown",
      failureReason: reason,
      transaction,
      // What the settlement was asked to move, which reconciliation checks against the chain.
      settledAmount: amount,
      upstreamMs: timings.upstream,
      settleMs: timings.settle,
    });
    this.log("settle_unknown", reason, transaction);
    timings.total = this.sinceEntry();
    return this.finished(paidAnswer(answer, undefined, timings), "settle_unknown");
  }

  /** The facilitator refused to settle: the work is dropped and undone, and the caller told why. */
  private async unsettled(answer: PreparedAnswer, settlement: SettleResponse): Promise<Finished> {
    const { timings } = this;
    const reason = settlement.errorReason ?? "settlement_failed";
    await this.services.ledger.update(this.paymentId, {
      status: "failed",
      failureReason: reason,
      upstreamMs: timings.upstream,
      settleMs: timings.settle,
    });
    if (answer.kind === "stream") await answer.stream.cancel();
    await answer.onUnsettled?.();
    this.log("settlement_failed", reason);
    const detail = settlement.errorMessage ? ` (${settlement.errorMessage})` : "";
    const document = paymentRequiredDocument(this.call, this.priced, this.services.retries.declaration);
    return this.finished(
      paymentChallenge(document, "settlement_failed", `Settlement failed: ${reason}${detail}`, this.v1Network()),
      "refused",
    );
  }

  /** The network's v1 name when the 402 offers v1 too. */
  private v1Network(): string | undefined {
    const { network } = this.services.gateway;
    return network.kind === "evm" ? network.x402V1Network : undefined;
  }

  private sinceEntry(): number {
    return this.call.quoteMs + performance.now() - this.entered;
  }

  private log(outcome: string, reason?: string, transaction?: string, settled?: bigint): void {
    logEvent(outcome === "settled" ? "info" : "warn", "paid_request", {
      resource: this.call.resourceUrl,
      outcome,
      payer: this.payment.payer,
      scheme: this.terms.requirements.scheme,
      amount: this.payment.payload.accepted.amount,
      settled: settled?.toString(),
      reason,
      transaction,
      timings_ms: Object.fromEntries(
        Object.entries(this.timings).map(([name, value]) => [name, Number(value.toFixed(2))]),
      ),
    });
  }
}
