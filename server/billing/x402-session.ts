import type { SettleResponse } from "@x402/core/types";
import { ApiError, isApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import { UpstreamError } from "../upstream/upstream-error";
import { usedTokensCharge } from "../pricing/used-tokens-charge";
import { logPaidRequest } from "./paid-request-log";
import type { BillableCall, ChallengeCode, Finished, PreparedAnswer, X402Price, X402Services } from "./payment-method";
import { Refusal } from "./refusal";
import type { AcceptedPayment, PricedRequest, Taking } from "./schemes/payment-scheme";
import { streamedWhileSettling } from "./stream-while-settling";
import { settledOnUsage } from "./usage-stream-settlement";
import { paidAnswer } from "./x402-challenge";
import type { SettlingSession } from "./settlements";
import type { PaymentProtocol } from "../core/payment-method-name";
import type { CallTrace } from "../tracing/call-trace";

type SessionTimings = { quote: number; verify: number; upstream: number; settle: number; total: number };

/**
 * The protocol an x402 payment came in (x402 itself, or another protocol's envelope around the same signed
 * authorization: MPP), and the headers by which its paid answers state the settlement (x402's for its version).
 */
export interface PaymentEnvelope {
  protocol: PaymentProtocol;
  receipt(settled: SettleResponse, version: 1 | 2): Record<string, string>;
}

/** What a session starts from: the call, its price, the payment its scheme accepted, and when billing began. */
export interface SessionStart {
  services: X402Services;
  call: BillableCall;
  priced: PricedRequest;
  accepted: AcceptedPayment;
  /** When the billing of the call began (performance.now()). */
  entered: number;
  /** The payment refused: the call's 402 with `code` and `message`, to answer. */
  refuse(code: ChallengeCode, message: string): Refusal;
  /** The protocol the payment came by, and how a paid answer states its settlement in it. */
  envelope: PaymentEnvelope;
}

/**
 * One accepted payment, from the work's start to what it is charged, the same for every scheme: the work runs (in
 * overlap order, beside the verdict, which it waits for); a failure releases the payment; an answer is charged its
 * price or, for a scheme that charges what was used, its tokens, and a stream is settled as its scheme charges.
 */
export class X402Session {
  readonly grant;
  /** Aborts the work when the verdict refuses the payment. */
  private readonly abort = new AbortController();
  /**
   * Each phase's time, for Server-Timing, the ledger and the metrics: written by this session, but for the work's
   * (`upstream`), which bill-request.ts's phase writes.
   */
  readonly timings: SessionTimings;
  private readonly accepted: AcceptedPayment;

  constructor(private readonly start: SessionStart) {
    this.accepted = start.accepted;
    this.timings = { quote: start.call.quoteMs, verify: 0, upstream: 0, settle: 0, total: 0 };
    this.accepted.verdict.then(
      ({ verifyMs }) => (this.timings.verify = verifyMs),
      (reason: unknown) => this.abort.abort(reason),
    );
    const { call } = start;
    const { nonce, payer } = this.accepted;
    const outputCap = call.quote.tokens?.maxOutput ?? 0;
    const wallet = { kind: "wallet" as const, address: payer.toLowerCase() };
    this.grant = { outputCap, payment: { nonce, payer }, payer: wallet, signal: this.abort.signal };
  }

  /** The request's trace, while tracing is on: what its answers cost is noted on it. */
  private get trace(): CallTrace | undefined {
    return this.start.call.request.trace;
  }

  /**
   * The verdict, once in: undefined for a valid payment; the 402 to answer for one the facilitator rejected (its row
   * already says so); a facilitator that could not judge is thrown.
   */
  private async refusal(): Promise<Finished | undefined> {
    try {
      await this.accepted.verdict;
      return undefined;
    } catch (error) {
      if (!(error instanceof Refusal)) throw error;
      const { protocol } = this.start.envelope;
      return { answer: error.authorization.answer, outcome: "refused", payment: protocol, timings: this.timings };
    }
  }

  /** Drops a finished work's answer for a payment that will not be taken: it is cancelled and what it wrote undone. */
  private async drop(answer: PreparedAnswer): Promise<void> {
    if (answer.kind === "stream") await answer.stream.cancel();
    await answer.onUnsettled?.();
  }

  /** The work failed: nothing is taken; a payment refused meanwhile is answered as such. */
  failed = (error: unknown): Promise<Finished> => this.answered(this.failWork(error));

  /** The work's answer: charged and delivered, or dropped for a payment that is not taken. */
  finish = (answer: PreparedAnswer): Promise<Finished> => this.answered(this.finishWork(answer));

  /** Whatever the call ends in, its payment-identifier is kept with a whole answer delivered, or let go of. */
  private async answered(ending: Promise<Finished>): Promise<Finished> {
    const { identifier } = this.accepted;
    const { retries } = this.start.services;
    const finished = await ending.catch(async (error: unknown) => {
      if (identifier) await retries.release(identifier);
      throw error;
    });
    if (identifier) await retries.ended(identifier, finished);
    return finished;
  }

  private failWork = async (error: unknown): Promise<Finished> => {
    const refused = await this.refusal();
    if (refused) return refused;
    const reason =
      error instanceof UpstreamError ? `upstream_${error.failure}` : isApiError(error) ? error.code : "work_failed";
    await this.accepted.release(reason, this.timings.upstream);
    this.log("not_charged", reason);
    if (!(error instanceof UpstreamError)) throw error;
    throw new ApiError("upstream_error", `The model provider failed (${error.message}); your payment was not settled`);
  };

  private finishWork = async (answer: PreparedAnswer): Promise<Finished> => {
    // A payment refused while the work ran: its answer is dropped, the refusal answered (or the failure thrown).
    const refused = await this.refusal().catch(async (error: unknown) => {
      await this.drop(answer);
      throw error;
    });
    if (refused) return this.drop(answer).then(() => refused);
    // The payment's settlement mode decides how it is taken (settlements.ts).
    return this.accepted.settles.finish(this.settling(), answer);
  };

  /** What the payment's settlement mode drives. */
  private settling(): SettlingSession {
    const { usage } = this.start.call;
    return {
      takeBeforeAnswer: (answer, amount) => this.takeBeforeAnswer(answer, amount),
      takeWhileStreaming: (answer) => this.finishWhileSettling(answer),
      takeOnUsage: (answer) => this.finishOnUsage(answer),
      price: this.start.priced.amount,
      used: (answer) => this.used(usage?.fromJson(answer.body), usage?.inputFromJson(answer.body)),
    };
  }

  /** Takes `amount` before the answer leaves; the answer says it cost that, taken or not. */
  private async takeBeforeAnswer(answer: PreparedAnswer, amount: bigint): Promise<Finished> {
    const { timings } = this;
    answer = { ...answer, price: this.priceOf(amount) };
    const taking = await this.accepted.take(amount);
    timings.settle = taking.settleMs;
    if (taking.kind === "refused") return this.unsettled(answer, amount, taking);
    const record = () => this.record(amount, taking);
    // Taken, or perhaps taken (reconciliation settles it): what the payment bought is written as the work is given.
    const { onSettled } = answer;
    if (onSettled)
      await this.start.services.writes.write(
        "paid_after_settlement",
        { endpoint: this.start.call.endpoint },
        onSettled,
      );
    timings.total = this.sinceEntry();
    if (taking.kind === "unknown") {
      // The work is done: deliver it rather than risk a payer paying for nothing; reconciliation settles the row.
      await record();
      return this.finished(paidAnswer(answer, undefined, timings, { trace: this.trace }), "settle_unknown");
    }
    // Taken: a whole answer goes out before the ledger records it (the payment cannot be taken twice: its nonce was
    // claimed first, a voucher is committed to its channel); a stream's answer waits for the record.
    if (answer.kind === "stream") await record();
    const afterSent = answer.kind === "json" ? () => void this.start.services.keep(record()) : undefined;
    const paid = paidAnswer(answer, taking.settlement, timings, {
      afterSent,
      trace: this.trace,
      receipt: this.receipt,
    });
    return this.finished(paid, "paid", amount);
  }

  /** A stream charged what it used goes out at once, taken on its usage as it passes (usage-stream-settlement.ts). */
  private finishOnUsage(answer: Extract<PreparedAnswer, { kind: "stream" }>): Promise<Finished> {
    const body = settledOnUsage(answer.stream.body, {
      ...this.start,
      upstreamMs: this.timings.upstream,
      charge: (outputTokens, reportedInput) => this.used(outputTokens, reportedInput),
      price: (amount) => this.priceOf(amount),
      log: this.log,
    });
    // Its cost is not known when the headers leave: no X-Paysvc-Cost and no PAYMENT-RESPONSE, the cost is stated in
    // the final usage event.
    const streamed = paidAnswer({ ...answer, stream: { ...answer.stream, body } }, undefined, this.timings, {
      trace: this.trace,
    });
    this.timings.total = this.sinceEntry();
    return this.finished(streamed, "paid");
  }

  /** A stream priced up front, passed on while its payment is taken (stream-while-settling.ts). */
  private finishWhileSettling(answer: Extract<PreparedAnswer, { kind: "stream" }>): Promise<Finished> {
    const { timings } = this;
    const { amount } = this.start.priced;
    const { body, settlement } = streamedWhileSettling(answer, {
      ...this.start,
      amount,
      upstreamMs: timings.upstream,
      delivered: (outputTokens) => (this.start.call.quote.tokens ? this.used(outputTokens) : amount),
      settled: (settleMs) => (timings.settle = settleMs),
      log: this.log,
    });
    const price = this.priceOf(amount);
    const streamed = paidAnswer({ ...answer, price, stream: { ...answer.stream, body } }, settlement, timings, {
      trace: this.trace,
    });
    timings.total = this.sinceEntry();
    return this.finished(streamed, "paid");
  }

  /** What an answer says `amount` is: atomic units of the network's USDC. */
  private priceOf(amount: bigint): X402Price {
    const { network } = this.start.services.gateway;
    return { amount, network: network.id, decimals: network.usdc.decimals };
  }

  /**
   * What a call charged what it used costs for the output tokens it wrote, at their price (the most the payment
   * allows when unknown), and the input the provider reported where it is more than counted; a call not billed in
   * tokens costs its price.
   */
  private used(outputTokens: number | undefined, reportedInput?: number): bigint {
    const { tokens, amount: quoted } = this.start.call.quote;
    const maximum = this.start.priced.amount;
    if (!tokens) return maximum;
    const { gateway, metrics } = this.start.services;
    if (reportedInput !== undefined) metrics.inputCounted(tokens.model.id, tokens.input, reportedInput);
    return usedTokensCharge({ tokens, quoted, maximum, outputTokens, reportedInput, network: gateway.network });
  }

  /** The ledger's record of what taking came to, and its log line. */
  private async record(amount: bigint, taking: Taking): Promise<void> {
    await this.accepted.record(amount, taking, this.timings.upstream);
    if (taking.kind === "taken") this.log("settled", undefined, taking.settlement.transaction, amount);
    else if (taking.kind === "unknown") this.log("settle_unknown", taking.reason, taking.transaction, amount);
    else this.log("settlement_failed", taking.reason);
  }

  /** The headers that state a settlement in the payment's protocol (and, for x402, its version). */
  private receipt = (settled: SettleResponse) => this.start.envelope.receipt(settled, this.accepted.version);

  private async finished(answer: ApiAnswer, outcome: Finished["outcome"], settled?: bigint): Promise<Finished> {
    const payment = this.start.envelope.protocol;
    return { answer, outcome, payment, timings: this.timings, settledAmount: settled };
  }

  /** The payment was refused when taken: the work is dropped and undone, and the caller told why. */
  private async unsettled(
    answer: PreparedAnswer,
    amount: bigint,
    refused: Extract<Taking, { kind: "refused" }>,
  ): Promise<Finished> {
    await this.record(amount, refused);
    await this.drop(answer);
    const detail = refused.message ? ` (${refused.message})` : "";
    const message = `Settlement failed: ${refused.reason}${detail}`;
    return this.finished(this.start.refuse("settlement_failed", message).authorization.answer, "refused");
  }

  private sinceEntry(): number {
    return this.start.call.quoteMs + performance.now() - this.start.entered;
  }

  private log = (outcome: string, reason?: string, transaction?: string, settled?: bigint): void =>
    logPaidRequest(this.start, this.timings, { outcome, reason, transaction, settled });
}
