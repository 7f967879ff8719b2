import type { SettleResponse } from "@x402/core/types";
import { ApiError, isApiError } from "../errors";
import type { PreparedAnswer } from "./payment-method";
import type { ApiAnswer } from "../http/api-answer";
import { logEvent } from "../log";
import { atomicToDecimal } from "../money";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import { decodePaymentSignature, MalformedPaymentError, type DecodedPayment } from "../payment/payment-signature";
import { describeMismatch } from "../payment/describe-mismatch";
import { UpstreamError } from "../upstream/upstream-error";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { Authorization, BillableCall, Finished, PaymentMethod } from "./payment-method";
import { paidAnswer, paymentChallenge, paymentRequiredDocument, type ChallengeCode } from "./x402-challenge";
import { facilitatorUnavailable, priceCall, type LiveGas, type PricedRequest } from "./x402-price";

/** What a payment session works with: the facilitator, the ledger, the metrics. */
type X402Services = { gateway: PaymentGateway; ledger: PaymentLedger; metrics: ServiceMetrics };

type Timings = { quote: number; verify: number; upstream: number; settle: number; total: number };

/**
 * x402 per request: quote (402), then with a signature: match, claim the nonce, verify; after the work, settle
 * only if the work succeeded. No path settles a payment for work that was not done.
 */
export class X402Payment implements PaymentMethod {
  constructor(
    private readonly gateway: PaymentGateway,
    private readonly ledger: PaymentLedger,
    private readonly metrics: ServiceMetrics,
    private readonly gas?: LiveGas,
  ) {}

  async authorize(call: BillableCall): Promise<Authorization> {
    const entered = performance.now();
    const { gateway, ledger, metrics } = this;
    const priced = await priceCall(gateway, call, this.gas).catch((error: unknown) => {
      if (isApiError(error) && error.code === "facilitator_unavailable") metrics.facilitatorFailed("supported");
      throw error;
    });
    const { amount, requirements } = priced;
    // The 402 document, built only for an answer that needs it (a paid request that succeeds does not).
    const challenge = (code: ChallengeCode, message: string): Authorization => ({
      kind: "answer",
      answer: paymentChallenge(paymentRequiredDocument(call, priced), code, message),
      outcome: code === "payment_required" ? "quoted" : "refused",
    });

    const header = call.request.headers.get("payment-signature");
    if (!header) {
      const total = `${atomicToDecimal(amount, gateway.network.usdc.decimals)} USD`;
      return challenge(
        "payment_required",
        `Payment required: ${total} in USDC on ${gateway.network.id}. Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE.`,
      );
    }
    let payment: DecodedPayment;
    try {
      payment = decodePaymentSignature(header, gateway.network.kind);
    } catch (error) {
      if (error instanceof MalformedPaymentError) return challenge("payment_invalid", error.message);
      throw error;
    }
    if (!gateway.matches(payment.payload, requirements)) {
      return challenge("payment_mismatch", describeMismatch(payment.payload.accepted, requirements));
    }
    const signedResource = payment.payload.resource?.url;
    if (signedResource !== undefined && signedResource !== call.resourceUrl) {
      return challenge("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
    }
    const paymentId = await ledger.claim({
      nonce: payment.nonce,
      payer: payment.payer,
      amount,
      network: requirements.network,
      resource: call.resourceUrl,
      endpoint: call.endpoint,
      model: call.quote.model,
      bodyHash: call.body.sha256,
      paymentSignature: header.trim(),
      quoteMs: call.quoteMs,
    });
    if (paymentId === undefined) {
      return challenge("payment_already_used", "This payment signature has already been used; sign a new payment");
    }

    const timings: Timings = { quote: call.quoteMs, verify: 0, upstream: 0, settle: 0, total: 0 };
    const started = performance.now();
    let verification;
    try {
      verification = await gateway.verify(payment.payload, requirements);
    } catch (error) {
      metrics.facilitatorFailed("verify");
      await ledger.update(paymentId, { status: "failed", failureReason: "facilitator_unavailable" });
      throw facilitatorUnavailable(error);
    }
    timings.verify = performance.now() - started;
    if (!verification.isValid) {
      const reason = verification.invalidReason ?? "invalid_payment";
      await ledger.update(paymentId, { status: "failed", failureReason: reason, verifyMs: timings.verify });
      const detail = verification.invalidMessage ? ` (${verification.invalidMessage})` : "";
      return challenge("payment_rejected", `Payment rejected by the facilitator: ${reason}${detail}`);
    }
    await ledger.update(paymentId, { status: "verified", verifyMs: timings.verify });
    const session = new X402Session({ gateway, ledger, metrics }, call, payment, paymentId, priced, timings, entered);
    return { kind: "granted", session: { grant: session.grant, failed: session.failed, finish: session.finish } };
  }
}

/** One verified payment, from the work's start to its settlement. */
class X402Session {
  readonly grant;
  private readonly workStarted = performance.now();

  constructor(
    private readonly services: X402Services,
    private readonly call: BillableCall,
    private readonly payment: DecodedPayment,
    private readonly paymentId: number,
    private readonly priced: PricedRequest,
    private readonly timings: Timings,
    private readonly entered: number,
  ) {
    const outputCap = call.quote.tokens?.maxOutput ?? 0;
    this.grant = { outputCap, usageRequired: false, payment: { nonce: payment.nonce, payer: payment.payer } };
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
    const { timings, paymentId } = this;
    const { ledger } = this.services;
    timings.upstream = performance.now() - this.workStarted;
    const started = performance.now();
    let settlement: SettleResponse;
    try {
      settlement = await this.services.gateway.settle(this.payment.payload, this.priced.requirements);
    } catch (error) {
      timings.settle = performance.now() - started;
      this.services.metrics.facilitatorFailed("settle");
      return this.outcomeUnknown(answer, (error as Error).message);
    }
    timings.settle = performance.now() - started;
    // Broadcast but not confirmed (the x402 server already asked once more): the transfer may still land.
    if (!settlement.success && settlement.errorReason === "settlement_pending" && settlement.transaction) {
      return this.outcomeUnknown(answer, "settlement_pending", settlement.transaction);
    }
    if (!settlement.success) return this.unsettled(answer, settlement);
    const { transaction } = settlement;
    const record = async () => {
      try {
        await ledger.update(paymentId, {
          status: "settled",
          transaction,
          upstreamMs: timings.upstream,
          settleMs: timings.settle,
        });
      } catch (error) {
        // The transfer is on chain and the work delivered; the row stays "verified" for reconciliation.
        logEvent("error", "ledger_update_failed", { paymentId, transaction, error: (error as Error).message });
      }
      this.log("settled", undefined, transaction);
    };
    timings.total = this.sinceEntry();
    // The payment is settled: a whole answer goes out before the ledger records it (the nonce was claimed before
    // verify, so recording later cannot let it be used twice); a stream's answer waits for the record.
    if (answer.kind === "stream") await record();
    const paid = paidAnswer(answer, settlement, timings, answer.kind === "json" ? () => void record() : undefined);
    return this.finished(paid, "paid");
  };

  private finished(answer: ApiAnswer, outcome: Finished["outcome"]): Finished {
    return { answer, outcome, payment: "x402", timings: this.timings };
  }

  /**
   * The facilitator may or may not have settled (it timed out, or the transfer is still pending). The work is done:
   * deliver it rather than risk a payer paying for nothing, and leave the row, with the transaction when one is
   * known, for reconciliation against the chain.
   */
  private async outcomeUnknown(answer: PreparedAnswer, reason: string, transaction?: string): Promise<Finished> {
    const { timings } = this;
    await this.services.ledger.update(this.paymentId, {
      status: "settle_unknown",
      failureReason: reason,
      transaction,
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
    const document = paymentRequiredDocument(this.call, this.priced);
    return this.finished(
      paymentChallenge(document, "settlement_failed", `Settlement failed: ${reason}${detail}`),
      "refused",
    );
  }

  private sinceEntry(): number {
    return this.call.quoteMs + performance.now() - this.entered;
  }

  private log(outcome: string, reason?: string, transaction?: string): void {
    logEvent(outcome === "settled" ? "info" : "warn", "paid_request", {
      resource: this.call.resourceUrl,
      outcome,
      payer: this.payment.payer,
      amount: this.payment.payload.accepted.amount,
      reason,
      transaction,
      timings_ms: Object.fromEntries(
        Object.entries(this.timings).map(([name, value]) => [name, Number(value.toFixed(2))]),
      ),
    });
  }
}
