import type { PaymentRequirements } from "@x402/core/types";
import { isApiError } from "../errors";
import type { ServiceMetrics } from "../metrics/service-metrics";
import { atomicToDecimal } from "../money";
import { describeMismatch } from "../payment/describe-mismatch";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import { decodePaymentSignature, MalformedPaymentError, type DecodedPayment } from "../payment/payment-signature";
import { decodeV1Payment, facilitatorTerms, v1Mismatch, v1Requirements, type V1Requirements } from "../payment/x402-v1";
import type { HeldRequest, KeptAnswer } from "../payment/paid-answers";
import {
  heldRequest,
  identifierConflict,
  identifierHeld,
  paymentIdentifierOf,
  replayedAnswer,
  type PaidRetries,
} from "./paid-retries";
import type { LocalSignatureCheck } from "../payment/local-signature";
import type { Authorization, BillableCall, PaymentMethod, Verified, X402Services } from "./payment-method";
import { Refusal } from "./refusal";
import { paymentChallenge, paymentRequiredDocument, resourceInfo, type ChallengeCode } from "./x402-challenge";
import { facilitatorUnavailable, priceCall, type LiveGas, type PricedRequest } from "./x402-price";
import { uptoDeadlineProblem } from "./upto-stream-settlement";
import { X402Session } from "./x402-session";

/** What x402 billing works with, beside the facilitator, the ledger, the metrics and the kept answers. */
export interface X402PaymentOptions extends X402Services {
  /** Networks that price settlement gas live. */
  gas?: LiveGas;
  /** Checks a payment's signature where it was made, before anyone else sees it. */
  signatures: LocalSignatureCheck;
  /** The order of verify, work and settlement (ServiceConfig.settlement); `strict` unless told. */
  settlement?: { order: "overlap" | "strict"; strictAfterUnpaidMs: number };
}

/**
 * x402 per request: quote (402), then with a signature: match, check the signature locally, claim the nonce,
 * verify (beside the work's start, in overlap order); after the work, settle only if the work succeeded. No path
 * settles a payment for work that was not done, and no answer goes out before the payment's verdict.
 */
export class X402Payment implements PaymentMethod {
  private readonly gateway: PaymentGateway;
  private readonly ledger: PaymentLedger;
  private readonly metrics: ServiceMetrics;
  private readonly retries: PaidRetries;

  constructor(private readonly options: X402PaymentOptions) {
    ({ gateway: this.gateway, ledger: this.ledger, metrics: this.metrics, retries: this.retries } = options);
  }

  /** The facilitator's verdict on a payment; one it cannot give is counted and answered 503. */
  private async verify(terms: Terms) {
    try {
      return await this.gateway.verify(terms.payload, terms.requirements);
    } catch (error) {
      this.metrics.facilitatorFailed("verify");
      throw facilitatorUnavailable(error);
    }
  }

  /**
   * The steps of a paid call, in order: price it; without a payment, the 402; else decode the payment, match it to
   * this request, check its signature locally, hold its payment-identifier (or answer a retry from what was kept
   * under it), claim its nonce, and verify it. A step that refuses throws the answer (Refusal), so each reads as
   * what it checks.
   */
  async authorize(call: BillableCall): Promise<Authorization> {
    const entered = performance.now();
    const priced = await this.price(call);
    const refuse = (code: ChallengeCode, message: string) => new Refusal(this.challenge(call, priced, code, message));
    const header = paymentHeader(call);
    if (!header) {
      const total = `${atomicToDecimal(priced.amount, this.gateway.network.usdc.decimals)} USD`;
      return refuse(
        "payment_required",
        `Payment required: ${total} in USDC on ${this.gateway.network.id}. Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE.`,
      ).authorization;
    }
    try {
      const { payment, v1 } = this.decode(header, call, priced, refuse);
      const signedFor = await this.match(payment, v1, call, priced, refuse);
      const terms = facilitatorTerms(payment, signedFor, v1);
      const identified = paymentIdentifierOf(payment);
      if (identified.problem) throw refuse("payment_invalid", identified.problem);
      const signature = await this.options.signatures.check(payment, signedFor);
      if (signature === "forged") {
        throw refuse(
          "payment_rejected",
          "Payment rejected: its signature is not the payer's (checked before any work)",
        );
      }
      const identifier = identified.id ? heldRequest(payment, identified.id, call) : undefined;
      if (identifier) {
        const hold = await this.retries.hold(identifier);
        if (hold.kind === "kept") return await this.replay(hold.answer, identifier, header, terms, refuse);
        if (hold.kind === "busy")
          return { kind: "answer", answer: identifierHeld(identifier, hold.request), outcome: "refused" };
      }
      try {
        const paymentId = await this.claim(payment, header, call, priced, identified.id, refuse);
        const overlapped = signature === "valid" && (await this.overlaps(call, payment.payer));
        const verdict = this.verifyClaimed(paymentId, terms, refuse);
        // In strict order the verdict comes first: a refusal is answered here, before any work.
        if (!overlapped) await verdict;
        const session = new X402Session({
          // The options are the services a session works with (the gateway, the ledger, the metrics...).
          services: this.options,
          call,
          payment,
          paymentId,
          priced,
          terms,
          verdict,
          overlapped,
          entered,
          identifier,
        });
        return { kind: "granted", session: { grant: session.grant, failed: session.failed, finish: session.finish } };
      } catch (error) {
        // Refused before any work: the id is free again for the same request with a good payment.
        if (identifier) await this.retries.release(identifier);
        throw error;
      }
    } catch (error) {
      if (error instanceof Refusal) return error.authorization;
      throw error;
    }
  }

  /**
   * Whether the call's work starts while the facilitator verifies (and a stream is passed on while it settles): in
   * overlap order, for work that is an upstream call, unless the payer left a stream unpaid lately.
   */
  private async overlaps(call: BillableCall, payer: string): Promise<boolean> {
    const { settlement } = this.options;
    if (settlement?.order !== "overlap" || !call.overlapsVerify) return false;
    return !(await this.ledger.unpaidSince(payer, new Date(Date.now() - settlement.strictAfterUnpaidMs)));
  }

  /** The call's price and requirements; a facilitator that cannot say what it supports is counted. */
  private price(call: BillableCall): Promise<PricedRequest> {
    return priceCall(this.gateway, call, this.options.gas).catch((error: unknown) => {
      if (isApiError(error) && error.code === "facilitator_unavailable") this.metrics.facilitatorFailed("supported");
      throw error;
    });
  }

  /** A 402 with the call's terms: built only for an answer that needs it (a paid request that succeeds does not). */
  private challenge(
    call: BillableCall,
    priced: PricedRequest,
    code: ChallengeCode,
    message: string,
  ): Extract<Authorization, { kind: "answer" }> {
    const document = paymentRequiredDocument(call, priced, this.retries.declaration);
    return {
      kind: "answer",
      answer: paymentChallenge(document, code, message, this.gateway.v1Network),
      outcome: code === "payment_required" ? "quoted" : "refused",
    };
  }

  /** The payment as sent: x402 v2 in PAYMENT-SIGNATURE, or v1 in X-PAYMENT (with the v1 form of the terms). */
  private decode(header: PaymentHeader, call: BillableCall, priced: PricedRequest, refuse: Refuse) {
    try {
      if (header.version === 2) {
        return { payment: decodePaymentSignature(header.value, this.gateway.network.kind), v1: undefined };
      }
      const payment = decodeV1Payment(header.value, this.gateway.network);
      return { payment, v1: v1Requirements(priced.requirements, this.gateway.v1Network!, resourceInfo(call)) };
    } catch (error) {
      if (error instanceof MalformedPaymentError) throw refuse("payment_invalid", error.message);
      throw error;
    }
  }

  /**
   * The payment is for exactly this request: one of its terms (and, v2, the resource it was signed for). Returns the
   * requirements it was signed for: `exact`, or `upto` where the 402 offered it.
   */
  private async match(
    payment: DecodedPayment,
    v1: V1Requirements | undefined,
    call: BillableCall,
    priced: PricedRequest,
    refuse: Refuse,
  ): Promise<PaymentRequirements> {
    if (v1) {
      if (!(await this.gateway.acceptsV1().catch(() => true))) {
        throw refuse(
          "payment_invalid",
          `This deployment's facilitator does not settle x402 v1 payments on ${this.gateway.v1Network}; pay with x402 v2: sign the requirements in the PAYMENT-REQUIRED header and send them in PAYMENT-SIGNATURE`,
        );
      }
      // v1 signs no resource: a payment is bound to its amount and pay-to (and the nonce, once).
      const problem = v1Mismatch(payment, v1);
      if (problem) throw refuse("payment_mismatch", problem);
      return priced.requirements;
    }
    const { accepted } = payment.payload;
    const offered = accepted.scheme === "upto" ? priced.upto : priced.requirements;
    if (!offered) {
      throw refuse(
        "payment_mismatch",
        `This request is not offered with the ${accepted.scheme} scheme (upto is offered for chat and Responses, where the deployment settles it); sign one of the requirements in PAYMENT-REQUIRED`,
      );
    }
    const signedFor = await this.gateway.signedFor(payment.payload, offered);
    if (!signedFor) throw refuse("payment_mismatch", describeMismatch(accepted, offered));
    const late = uptoDeadlineProblem(payment.deadline);
    if (late) throw refuse("payment_invalid", late);
    const signedResource = payment.payload.resource?.url;
    if (signedResource !== undefined && signedResource !== call.resourceUrl) {
      throw refuse("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
    }
    return signedFor;
  }

  /** A retry of a delivered request under its payment-identifier: its kept answer, charged once (for the first). */
  private async replay(kept: KeptAnswer, held: HeldRequest, header: PaymentHeader, terms: Terms, refuse: Refuse) {
    if (kept.request !== held.request) {
      return { kind: "answer", answer: identifierConflict(kept.paymentId), outcome: "refused" } as const;
    }
    // The same payment (the header its row keeps, byte for byte) replays; one signed anew is verified, never settled.
    const same = kept.nonce === held.nonce && (await this.ledger.findByNonce(held.nonce))?.paymentSignature;
    const again = same === header.value.trim() || (await this.verify(terms)).isValid;
    if (!again) throw refuse("payment_rejected", "The payment for this retry was rejected by the facilitator");
    return { kind: "answer", answer: replayedAnswer(kept), outcome: "replayed" } as const;
  }

  /** The nonce, claimed in the ledger before anything else sees the payment: a signature is used once. */
  private async claim(
    payment: DecodedPayment,
    header: PaymentHeader,
    call: BillableCall,
    priced: PricedRequest,
    identifier: string | undefined,
    refuse: Refuse,
  ): Promise<number> {
    const paymentId = await this.ledger.claim({
      nonce: payment.nonce,
      payer: payment.payer,
      amount: priced.amount,
      scheme: payment.payload.accepted?.scheme === "upto" ? "upto" : "exact",
      network: priced.requirements.network,
      resource: call.resourceUrl,
      endpoint: call.endpoint,
      model: call.quote.model,
      bodyHash: call.body.sha256,
      paymentSignature: header.value.trim(),
      quoteMs: call.quoteMs,
    });
    if (paymentId !== undefined) return paymentId;
    const retry = identifier
      ? " (if its request is still being answered, send it again shortly with the same payment-identifier to get its answer)"
      : "";
    throw refuse("payment_already_used", `This payment signature has already been used; sign a new payment${retry}`);
  }

  /** The facilitator's verdict on the claimed payment, recorded; the time it took and who gave it. */
  private async verifyClaimed(
    paymentId: number,
    terms: ReturnType<typeof facilitatorTerms>,
    refuse: Refuse,
  ): Promise<Verified> {
    const started = performance.now();
    let verification;
    try {
      verification = await this.verify(terms);
    } catch (error) {
      await this.ledger.update(paymentId, { status: "failed", failureReason: "facilitator_unavailable" });
      throw error;
    }
    const verifyMs = performance.now() - started;
    const { facilitator } = verification;
    if (!verification.isValid) {
      const reason = verification.invalidReason ?? "invalid_payment";
      await this.ledger.update(paymentId, { status: "failed", failureReason: reason, verifyMs, facilitator });
      const detail = verification.invalidMessage ? ` (${verification.invalidMessage})` : "";
      throw refuse("payment_rejected", `Payment rejected by the facilitator: ${reason}${detail}`);
    }
    await this.ledger.update(paymentId, { status: "verified", verifyMs, facilitator });
    return { verifyMs, facilitator };
  }
}

type Refuse = (code: ChallengeCode, message: string) => Refusal;
type Terms = ReturnType<typeof facilitatorTerms>;

/** The payment header and its x402 version: v2 in PAYMENT-SIGNATURE, v1 in X-PAYMENT (v2 is read when both come). */
type PaymentHeader = { value: string; version: 1 | 2 };

function paymentHeader(call: BillableCall): PaymentHeader | undefined {
  const v2 = call.request.headers.get("payment-signature");
  if (v2) return { value: v2, version: 2 };
  const v1 = call.request.headers.get("x-payment");
  return v1 ? { value: v1, version: 1 } : undefined;
}
