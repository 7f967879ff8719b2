import { decodePaymentSignatureHeader, encodePaymentRequiredHeader } from "@x402/core/http";
import type { PaymentPayload } from "@x402/core/types";
import { ApiError, errorObject, errorStatus } from "../errors";
import { jsonAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { describeMismatch } from "../payment/describe-mismatch";
import { FacilitatorUnavailableError, type Settlement, type Verdict } from "../payment/facilitator-answers";
import { usedTokensCharge } from "../pricing/used-tokens-charge";
import { UpstreamError } from "../upstream/upstream-error";
import { channelCharge, recordChannelCharge, type ChannelCall } from "./channel-charge";
import { channelStream } from "./channel-stream";
import type {
  Authorization,
  BillableCall,
  Finished,
  PaymentMethod,
  PreparedAnswer,
  X402Services,
} from "./payment-method";
import { paidAnswer, paymentRequiredDocument, type ChallengeCode } from "./x402-challenge";
import { facilitatorUnavailable, priceCall, type LiveGas, type PricedRequest } from "./x402-price";

/** Whether a request is paid from an x402 `batch-settlement` channel (a voucher, with a deposit or alone). */
export function isChannelPayment(request: ApiRequest): boolean {
  const header = request.headers.get("payment-signature");
  if (!header) return false;
  try {
    return decodePaymentSignatureHeader(header).accepted?.scheme === "batch-settlement";
  } catch {
    return false;
  }
}

/**
 * x402 `batch-settlement`: a payer's deposit into a channel, then a cumulative voucher per request. The scheme
 * (@x402/evm, over our channel storage) checks each voucher against the channel's running total and holds the
 * channel for the request (one at a time); the work runs; the channel is charged what the call cost (the tokens
 * used, as `upto` charges them; otherwise the quote), or let go of for work that failed. A voucher costs no chain
 * transaction and, while the channel's chain state is fresh, no facilitator call; the deposit is settled on chain
 * with the first request, and the vouchers are claimed later, many in one transaction.
 */
export class ChannelPayment implements PaymentMethod {
  constructor(private readonly services: X402Services & { gas?: LiveGas }) {}

  async authorize(call: BillableCall): Promise<Authorization> {
    const { gateway, metrics } = this.services;
    const priced = await priceCall(gateway, call, this.services.gas).catch((error: unknown) => {
      metrics.facilitatorFailed("supported");
      throw facilitatorUnavailable(error);
    });
    const requirements = priced.batch;
    const refuse = (code: ChallengeCode, message: string) => this.refusal(call, priced, code, message);
    if (!requirements) {
      return refuse(
        "payment_mismatch",
        "This request is not offered with batch-settlement channels here; sign one of the requirements in PAYMENT-REQUIRED",
      );
    }
    let payload: PaymentPayload;
    try {
      payload = decodePaymentSignatureHeader(call.request.headers.get("payment-signature")!);
    } catch (error) {
      return refuse("payment_invalid", `The PAYMENT-SIGNATURE header cannot be decoded: ${(error as Error).message}`);
    }
    if (!gateway.matches(payload, requirements)) {
      return refuse("payment_mismatch", describeMismatch(payload.accepted, requirements));
    }
    const signedResource = payload.resource?.url;
    if (signedResource !== undefined && signedResource !== call.resourceUrl) {
      return refuse("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
    }
    let verdict: Verdict;
    try {
      verdict = await gateway.verify(payload, requirements);
    } catch (error) {
      if (!(error instanceof FacilitatorUnavailableError)) throw error;
      metrics.facilitatorFailed("verify");
      throw facilitatorUnavailable(error);
    }
    if (!verdict.isValid) return this.rejected(call, priced, payload, verdict);
    const session = new ChannelSession({ ...this.services, call, priced, payload, requirements, verdict });
    return { kind: "granted", session };
  }

  /** A 402 with the call's terms, refusing what was sent. */
  private refusal(call: BillableCall, priced: PricedRequest, code: ChallengeCode, message: string): Authorization {
    const document = paymentRequiredDocument(call, priced, this.services.retries.declaration);
    return {
      kind: "answer",
      answer: challenge(document, code, message),
      outcome: code === "payment_required" ? "quoted" : "refused",
    };
  }

  /**
   * The scheme's refusal, as its 402: the reason code the official client reads in PAYMENT-REQUIRED's `error` and,
   * for a voucher that does not follow the channel's running total, the channel's state to resync from.
   */
  private async rejected(call: BillableCall, priced: PricedRequest, payload: PaymentPayload, verdict: Verdict) {
    const reason = verdict.invalidReason ?? "invalid_payment";
    const route = this.services.gateway.route(verdict.facilitator)!;
    const document = paymentRequiredDocument(call, priced, this.services.retries.declaration);
    const required = await route.paymentRequired(document.accepts, document.resource!, reason, payload);
    const detail = verdict.invalidMessage ? ` (${verdict.invalidMessage})` : "";
    const message = `Payment rejected: ${reason}${detail}`;
    const answer = challenge({ ...required, extensions: document.extensions }, "payment_rejected", message);
    return { kind: "answer", answer, outcome: "refused" } as const;
  }
}

/** A 402 whose PAYMENT-REQUIRED carries the document as given (its `error`, a reason code, included). */
function challenge(
  document: ReturnType<typeof paymentRequiredDocument>,
  code: ChallengeCode,
  message: string,
): ApiAnswer {
  return jsonAnswer(
    { ...document, error: errorObject(code, message) },
    {
      status: errorStatus(code),
      headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(document), "Cache-Control": "no-store" },
    },
  );
}

/** One request paid from a channel, from the work's start to its charge. */
class ChannelSession {
  readonly grant;
  private readonly started = performance.now();

  constructor(private readonly paid: ChannelCall) {
    const { call, verdict, payload } = paid;
    const channel = (payload.payload as { channelConfig?: { payer?: string } }).channelConfig;
    this.grant = {
      outputCap: call.quote.tokens?.maxOutput ?? 0,
      usageRequired: call.usage !== undefined,
      payment: { nonce: channelCharge(payload).channelId, payer: verdict.payer ?? channel?.payer ?? "" },
    };
  }

  /** The work failed: the channel is let go of, nothing charged. */
  failed = async (error: unknown): Promise<Finished> => {
    const { gateway } = this.paid;
    const route = gateway.route(this.paid.verdict.facilitator)!;
    await route.cancel(
      this.paid.payload,
      this.paid.requirements,
      error instanceof UpstreamError ? "handler_failed" : "handler_threw",
    );
    if (!(error instanceof UpstreamError)) throw error;
    throw new ApiError("upstream_error", `The model provider failed (${error.message}); your channel was not charged`);
  };

  finish = async (answer: PreparedAnswer): Promise<Finished> => {
    const timings = { quote: this.paid.call.quoteMs, upstream: performance.now() - this.started, settle: 0 };
    if (answer.kind === "stream") {
      const body = channelStream(answer.stream.body, { ...this.paid, charge: (output) => this.used(output) });
      const streamed = paidAnswer({ ...answer, stream: { ...answer.stream, body } }, undefined, timings);
      return { answer: streamed, outcome: "paid", payment: "x402", timings };
    }
    const { call } = this.paid;
    const amount =
      call.quote.tokens && call.usage ? this.used(call.usage.fromJson(answer.body)) : this.paid.priced.amount;
    const settling = performance.now();
    const settlement = await recordChannelCharge(this.paid, amount);
    timings.settle = performance.now() - settling;
    if (!settlement?.success) return this.unsettled(answer, settlement);
    const price = {
      amount,
      network: this.paid.requirements.network,
      decimals: this.paid.gateway.network.usdc.decimals,
    };
    return { answer: paidAnswer({ ...answer, price }, settlement, timings), outcome: "paid", payment: "x402", timings };
  };

  /** What the output tokens cost, as `upto` charges them (the most the voucher allows when unknown). */
  private used(outputTokens: number | undefined): bigint {
    const { tokens, amount: quoted } = this.paid.call.quote;
    if (!tokens) return this.paid.priced.amount;
    const { network } = this.paid.gateway;
    return usedTokensCharge({ tokens, quoted, maximum: this.paid.priced.amount, outputTokens, network });
  }

  /** The charge was refused (or its outcome is unknown): the answer is dropped, the caller told. */
  private async unsettled(answer: PreparedAnswer, settlement: Settlement | undefined): Promise<Finished> {
    await answer.onUnsettled?.();
    const reason = settlement?.errorReason ?? "settlement_unknown";
    const { call, priced, retries } = this.paid;
    const document = paymentRequiredDocument(call, priced, retries.declaration);
    return {
      answer: challenge(
        { ...document, error: reason },
        "settlement_failed",
        `The channel could not be charged: ${reason}`,
      ),
      outcome: "refused",
      payment: "x402",
      timings: {},
    };
  }
}
