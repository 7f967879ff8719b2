import type { Settlement } from "../payment/facilitator-answers";
import { ApiError } from "../errors";
import type { ApiAnswer } from "../http/api-answer";
import { logPaidRequest } from "./paid-request-log";
import type { DecodedPayment } from "../payment/payment-signature";
import type { facilitatorTerms } from "../payment/x402-v1";
import { UpstreamError } from "../upstream/upstream-error";
import { usedTokensCharge } from "../pricing/used-tokens-charge";
import { settledOnUsage } from "./upto-stream-settlement";
import { Refusal } from "./refusal";
import { chatStreamError, streamedWhileSettling } from "./stream-while-settling";
import type { HeldRequest } from "../payment/paid-answers";
import type { BillableCall, Finished, PreparedAnswer, Verified, X402Price, X402Services } from "./payment-method";
import { facilitatorOf, settleVerified } from "./stream-settlement";
import { paidAnswer, paymentChallenge, paymentRequiredDocument } from "./x402-challenge";
import type { PricedRequest } from "./x402-price";

export type Timings = { quote: number; verify: number; upstream: number; settle: number; total: number };

/** What a session starts from: the payment and its verdict, what it pays for, and how long getting here took. */
export interface SessionStart {
  services: X402Services;
  call: BillableCall;
  payment: DecodedPayment;
  /** The payment's ledger row. */
  paymentId: number;
  priced: PricedRequest;
  /** What the facilitator settles: the payload with the requirements of its version. */
  terms: ReturnType<typeof facilitatorTerms>;
  /**
   * The facilitator's verdict: the time verify took, or a rejection with the Refusal to answer (or the facilitator's
   * failure). Already in, unless the work runs beside it (`overlapped`).
   */
  verdict: Promise<Verified>;
  /** The work started before the verdict, and a stream is passed on while it settles (SETTLEMENT_ORDER=overlap). */
  overlapped: boolean;
  /** When the billing of the call began (performance.now()). */
  entered: number;
  /** The caller's payment-identifier, held for this payment: a whole answer is kept under it for a retry. */
  identifier: HeldRequest | undefined;
}

/** One verified payment, from the work's start to its settlement. */
export class X402Session {
  readonly grant;
  /** Aborts the work when the verdict refuses the payment. */
  private readonly abort = new AbortController();
  /** Each phase's time, written by this session only, for Server-Timing, the ledger and the metrics. */
  private readonly timings: Timings;
  private readonly workStarted = performance.now();

  constructor(private readonly start: SessionStart) {
    this.timings = { quote: start.call.quoteMs, verify: 0, upstream: 0, settle: 0, total: 0 };
    this.start.verdict.then(
      ({ verifyMs }) => (this.timings.verify = verifyMs),
      (reason: unknown) => this.abort.abort(reason),
    );
    const outputCap = start.call.quote.tokens?.maxOutput ?? 0;
    const { nonce, payer } = start.payment;
    // An upto stream is settled on its usage, so the work asks the upstream for it (hidden if not wanted).
    const usageRequired = start.terms.requirements.scheme === "upto";
    this.grant = { outputCap, usageRequired, payment: { nonce, payer }, signal: this.abort.signal };
  }

  /**
   * The verdict, once in: undefined for a valid payment; the 402 to answer for one the facilitator rejected (its row
   * already says so); a facilitator that could not judge is thrown.
   */
  private async refusal(): Promise<Finished | undefined> {
    try {
      await this.start.verdict;
      return undefined;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      return { answer: error.authorization.answer, outcome: "refused", payment: "x402", timings: this.timings };
    }
  }

  /** Drops a finished work's answer for a payment that will not be taken: it is cancelled and what it wrote undone. */
  private async drop(answer: PreparedAnswer): Promise<void> {
    if (answer.kind === "stream") await answer.stream.cancel();
    await answer.onUnsettled?.();
  }

  /** The work failed: nothing is settled; a payment refused meanwhile is answered as such. */
  failed = (error: unknown): Promise<Finished> => this.answered(this.failWork(error));

  /** The work's answer: settled and delivered, or dropped for a payment that is not taken. */
  finish = (answer: PreparedAnswer): Promise<Finished> => this.answered(this.finishWork(answer));

  /** Whatever the call ends in, its payment-identifier is kept with a whole answer delivered, or let go of. */
  private async answered(ending: Promise<Finished>): Promise<Finished> {
    const { identifier, services } = this.start;
    const finished = await ending.catch(async (error: unknown) => {
      if (identifier) await services.retries.release(identifier);
      throw error;
    });
    if (identifier) await services.retries.ended(identifier, finished);
    return finished;
  }

  private failWork = async (error: unknown): Promise<Finished> => {
    const { timings } = this;
    timings.upstream = performance.now() - this.workStarted;
    const refused = await this.refusal();
    if (refused) return refused;
    const reason = error instanceof UpstreamError ? `upstream_${error.failure}` : "work_failed";
    const { paymentId, services } = this.start;
    await services.writes.write("ledger_update", { paymentId, status: "not_charged" }, () =>
      services.ledger.update(paymentId, { status: "not_charged", failureReason: reason, upstreamMs: timings.upstream }),
    );
    this.log("not_charged", reason);
    if (!(error instanceof UpstreamError)) throw error;
    throw new ApiError("upstream_error", `The model provider failed (${error.message}); your payment was not settled`);
  };

  private finishWork = async (answer: PreparedAnswer): Promise<Finished> => {
    // The work's own time, whether or not the verdict is in yet.
    this.timings.upstream = performance.now() - this.workStarted;
    // A payment refused while the work ran: its answer is dropped, the refusal answered (or the failure thrown).
    const refused = await this.refusal().catch(async (error: unknown) => {
      await this.drop(answer);
      throw error;
    });
    if (refused) return this.drop(answer).then(() => refused);
    if (answer.kind === "stream") {
      if (this.start.terms.requirements.scheme === "upto") return this.finishUptoStream(answer);
      if (this.start.overlapped) return this.finishWhileSettling(answer);
    }
    const { timings } = this;
    const { paymentId, services } = this.start;
    // What every answer built below says it cost, settled or not: what this payment settles.
    const amount = this.settlementAmount(answer);
    answer = { ...answer, price: this.priceOf(amount) };
    const started = performance.now();
    let settlement: Settlement;
    try {
      const upto = this.start.terms.requirements.scheme === "upto";
      settlement = await settleVerified(this.start, upto ? amount : undefined);
    } catch (error) {
      timings.settle = performance.now() - started;
      this.start.services.metrics.facilitatorFailed("settle");
      return this.outcomeUnknown(answer, amount, (error as Error).message, undefined, facilitatorOf(error));
    }
    timings.settle = performance.now() - started;
    const { transaction, facilitator } = settlement;
    // Broadcast but not confirmed (the x402 server already asked once more): the transfer may still land.
    if (!settlement.success && settlement.errorReason === "settlement_pending" && transaction) {
      return this.outcomeUnknown(answer, amount, "settlement_pending", transaction, facilitator);
    }
    if (!settlement.success) return this.unsettled(answer, settlement);
    const record = async () => {
      const update = { transaction, facilitator, settledAmount: amount, settleMs: timings.settle };
      // The transfer is on chain and the work delivered: a database away delays the record (deferred-writes.ts).
      await services.writes.write("ledger_update", { paymentId, status: "settled", transaction }, () =>
        services.ledger.update(paymentId, { status: "settled", ...update, upstreamMs: timings.upstream }),
      );
      this.log("settled", undefined, transaction, amount);
    };
    timings.total = this.sinceEntry();
    // The payment is settled: a whole answer goes out before the ledger records it (the nonce was claimed before
    // verify, so recording later cannot let it be used twice); a stream's answer waits for the record.
    if (answer.kind === "stream") await record();
    const afterSent = answer.kind === "json" ? () => void services.keep(record()) : undefined;
    const paid = paidAnswer(answer, settlement, timings, afterSent);
    return this.finished(paid, "paid", amount);
  };

  /** An `upto` stream goes out at once, settled on its usage as it passes (upto-stream-settlement.ts). */
  private finishUptoStream(answer: Extract<PreparedAnswer, { kind: "stream" }>): Promise<Finished> {
    const { timings } = this;
    const body = settledOnUsage(answer.stream.body, {
      ...this.start,
      network: this.start.priced.requirements.network,
      upstreamMs: timings.upstream,
      charge: (outputTokens) => this.usedAmount(outputTokens),
      deadline: this.start.payment.deadline!,
      failWith: answer.failWith ?? chatStreamError,
      log: this.log,
    });
    // Its cost is not known when the headers leave: no X-Paysvc-Cost and no PAYMENT-RESPONSE, the cost is stated in
    // the final usage event.
    const streamed = paidAnswer({ ...answer, stream: { ...answer.stream, body } }, undefined, timings);
    timings.total = this.sinceEntry();
    return this.finished(streamed, "paid");
  }

  /** An `exact` stream passed on while its payment settles (stream-while-settling.ts). */
  private finishWhileSettling(answer: Extract<PreparedAnswer, { kind: "stream" }>): Promise<Finished> {
    const { timings } = this;
    const amount = this.start.priced.amount;
    const { body, settlement } = streamedWhileSettling(answer, {
      ...this.start,
      amount,
      upstreamMs: timings.upstream,
      delivered: (outputTokens) => (this.start.call.quote.tokens ? this.usedAmount(outputTokens) : amount),
      settled: (settleMs) => (timings.settle = settleMs),
      log: this.log,
    });
    const price = this.priceOf(amount);
    const streamed = paidAnswer({ ...answer, price, stream: { ...answer.stream, body } }, settlement, timings);
    timings.total = this.sinceEntry();
    return this.finished(streamed, "paid");
  }

  /** What an answer says `amount` is: atomic units of the network's USDC. */
  private priceOf(amount: bigint): X402Price {
    const { decimals } = this.start.services.gateway.network.usdc;
    return { amount, network: this.start.priced.requirements.network, decimals };
  }

  /**
   * What the payment settles: its price (`exact`); for `upto`, the tokens the answer used at their price (the
   * whole maximum when the answer does not say how many it wrote).
   */
  private settlementAmount(answer: PreparedAnswer): bigint {
    if (this.start.terms.requirements.scheme !== "upto" || !this.start.call.quote.tokens || answer.kind !== "json") {
      return this.start.priced.amount;
    }
    return this.usedAmount(this.start.call.usage?.fromJson(answer.body));
  }

  /** An upto call's charge for the output tokens it used (the maximum when unknown). */
  private usedAmount(outputTokens: number | undefined): bigint {
    const { tokens, amount: quoted } = this.start.call.quote;
    const { network } = this.start.services.gateway;
    return usedTokensCharge({ tokens: tokens!, quoted, maximum: this.start.priced.amount, outputTokens, network });
  }

  private async finished(answer: ApiAnswer, outcome: Finished["outcome"], settled?: bigint): Promise<Finished> {
    // v1 clients read the settlement from X-PAYMENT-RESPONSE (same encoding); PAYMENT-RESPONSE stays for all.
    const settlement = answer.headers["payment-response"];
    if (this.start.payment.version === 1 && settlement) answer.headers["x-payment-response"] = settlement;
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
    transaction: string | undefined,
    facilitator: string | undefined,
  ): Promise<Finished> {
    const { timings } = this;
    const { paymentId, services } = this.start;
    // What the settlement was asked to move (settledAmount), which reconciliation checks against the chain.
    const update = { failureReason: reason, transaction, facilitator, settledAmount: amount };
    await services.writes.write("ledger_update", { paymentId, status: "settle_unknown", transaction }, () =>
      services.ledger.update(paymentId, { status: "settle_unknown", ...update, ...this.phases() }),
    );
    this.log("settle_unknown", reason, transaction);
    timings.total = this.sinceEntry();
    return this.finished(paidAnswer(answer, undefined, timings), "settle_unknown");
  }

  /** The facilitator refused to settle: the work is dropped and undone, and the caller told why. */
  private async unsettled(answer: PreparedAnswer, settlement: Settlement): Promise<Finished> {
    const reason = settlement.errorReason ?? "settlement_failed";
    const { paymentId, services } = this.start;
    const { facilitator } = settlement;
    await services.writes.write("ledger_update", { paymentId, status: "failed" }, () =>
      services.ledger.update(paymentId, { status: "failed", failureReason: reason, facilitator, ...this.phases() }),
    );
    await this.drop(answer);
    this.log("settlement_failed", reason);
    const detail = settlement.errorMessage ? ` (${settlement.errorMessage})` : "";
    const { call, priced } = this.start;
    const document = paymentRequiredDocument(call, priced, services.retries.declaration);
    const message = `Settlement failed: ${reason}${detail}`;
    return this.finished(
      paymentChallenge(document, "settlement_failed", message, services.gateway.v1Network),
      "refused",
    );
  }

  /** The phases' times a final ledger row keeps. */
  private phases() {
    return { upstreamMs: this.timings.upstream, settleMs: this.timings.settle };
  }

  private sinceEntry(): number {
    return this.start.call.quoteMs + performance.now() - this.start.entered;
  }

  private log = (outcome: string, reason?: string, transaction?: string, settled?: bigint): void =>
    logPaidRequest(this.start, this.timings, { outcome, reason, transaction, settled });
}
