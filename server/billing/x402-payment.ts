import { isApiError } from "../errors";
import type { ServiceMetrics } from "../metrics/service-metrics";
import { atomicToDecimal } from "../money";
import { describeMismatch } from "../payment/describe-mismatch";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import { decodePaymentSignature, MalformedPaymentError, type DecodedPayment } from "../payment/payment-signature";
import { decodeV1Payment, facilitatorTerms, v1Mismatch, v1Requirements, type V1Requirements } from "../payment/x402-v1";
import { identifierConflict, paymentIdentifierOf, replayedAnswer, requestKey, type PaidRetries } from "./paid-retries";
import type { Authorization, BillableCall, PaymentMethod } from "./payment-method";
import { paymentChallenge, paymentRequiredDocument, resourceInfo, type ChallengeCode } from "./x402-challenge";
import { facilitatorUnavailable, priceCall, type LiveGas } from "./x402-price";
import { X402Session, type Timings } from "./x402-session";

/**
 * x402 per request: quote (402), then with a signature: match, claim the nonce, verify; after the work, settle
 * only if the work succeeded. No path settles a payment for work that was not done.
 */
export class X402Payment implements PaymentMethod {
  constructor(
    private readonly gateway: PaymentGateway,
    private readonly ledger: PaymentLedger,
    private readonly metrics: ServiceMetrics,
    private readonly retries: PaidRetries,
    private readonly gas?: LiveGas,
  ) {}

  /** The facilitator's verdict on a payment; one it cannot give is counted and answered 503. */
  private async verify(terms: ReturnType<typeof facilitatorTerms>) {
    try {
      return await this.gateway.verify(terms.payload, terms.requirements);
    } catch (error) {
      this.metrics.facilitatorFailed("verify");
      throw facilitatorUnavailable(error);
    }
  }

  async authorize(call: BillableCall): Promise<Authorization> {
    const entered = performance.now();
    const { gateway, ledger, metrics } = this;
    const priced = await priceCall(gateway, call, this.gas).catch((error: unknown) => {
      if (isApiError(error) && error.code === "facilitator_unavailable") metrics.facilitatorFailed("supported");
      throw error;
    });
    const { amount, requirements } = priced;
    const v1Network = gateway.network.kind === "evm" ? gateway.network.x402V1Network : undefined;
    // The 402 document, built only for an answer that needs it (a paid request that succeeds does not).
    const challenge = (code: ChallengeCode, message: string): Authorization => ({
      kind: "answer",
      answer: paymentChallenge(
        paymentRequiredDocument(call, priced, this.retries.declaration),
        code,
        message,
        v1Network,
      ),
      outcome: code === "payment_required" ? "quoted" : "refused",
    });

    // x402 v2 in PAYMENT-SIGNATURE; v1 clients send X-PAYMENT (when both come, v2 is read).
    const v2Header = call.request.headers.get("payment-signature");
    const header = v2Header ?? call.request.headers.get("x-payment");
    if (!header) {
      const total = `${atomicToDecimal(amount, gateway.network.usdc.decimals)} USD`;
      return challenge(
        "payment_required",
        `Payment required: ${total} in USDC on ${gateway.network.id}. Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE.`,
      );
    }
    let payment: DecodedPayment;
    let v1: V1Requirements | undefined;
    try {
      if (v2Header) payment = decodePaymentSignature(header, gateway.network.kind);
      else {
        payment = decodeV1Payment(header, gateway.network);
        v1 = v1Requirements(requirements, v1Network!, resourceInfo(call));
      }
    } catch (error) {
      if (error instanceof MalformedPaymentError) return challenge("payment_invalid", error.message);
      throw error;
    }
    if (v1) {
      if (!(await gateway.acceptsV1().catch(() => true))) {
        return challenge(
          "payment_invalid",
          `This deployment's facilitator does not settle x402 v1 payments on ${v1Network}; pay with x402 v2: sign the requirements in the PAYMENT-REQUIRED header and send them in PAYMENT-SIGNATURE`,
        );
      }
      // v1 signs no resource: a payment is bound to its amount and pay-to (and the nonce, once).
      const problem = v1Mismatch(payment, v1);
      if (problem) return challenge("payment_mismatch", problem);
    } else {
      if (!gateway.matches(payment.payload, requirements)) {
        return challenge("payment_mismatch", describeMismatch(payment.payload.accepted, requirements));
      }
      const signedResource = payment.payload.resource?.url;
      if (signedResource !== undefined && signedResource !== call.resourceUrl) {
        return challenge("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
      }
    }
    const terms = facilitatorTerms(payment, requirements, v1);
    const identified = paymentIdentifierOf(payment);
    if (identified.problem) return challenge("payment_invalid", identified.problem);
    const kept = identified.id && (await this.retries.find(payment.payer, identified.id));
    if (kept) {
      // A retry of a delivered request: its kept answer, charged once (for the first).
      if (kept.request !== requestKey(call.resourceUrl, call.body.sha256)) {
        return { kind: "answer", answer: identifierConflict(identified.id!), outcome: "refused" };
      }
      // Signed anew for the retry: it must be the payer's valid signature, though it is never settled.
      const again = kept.nonce === payment.nonce || (await this.verify(terms)).isValid;
      if (!again) return challenge("payment_rejected", "The payment for this retry was rejected by the facilitator");
      return { kind: "answer", answer: replayedAnswer(kept), outcome: "replayed" };
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
      const retry = identified.id
        ? " (if its request is still being answered, send it again shortly with the same payment-identifier to get its answer)"
        : "";
      return challenge(
        "payment_already_used",
        `This payment signature has already been used; sign a new payment${retry}`,
      );
    }

    const timings: Timings = { quote: call.quoteMs, verify: 0, upstream: 0, settle: 0, total: 0 };
    const started = performance.now();
    let verification;
    try {
      verification = await this.verify(terms);
    } catch (error) {
      await ledger.update(paymentId, { status: "failed", failureReason: "facilitator_unavailable" });
      throw error;
    }
    timings.verify = performance.now() - started;
    if (!verification.isValid) {
      const reason = verification.invalidReason ?? "invalid_payment";
      await ledger.update(paymentId, { status: "failed", failureReason: reason, verifyMs: timings.verify });
      const detail = verification.invalidMessage ? ` (${verification.invalidMessage})` : "";
      return challenge("payment_rejected", `Payment rejected by the facilitator: ${reason}${detail}`);
    }
    await ledger.update(paymentId, { status: "verified", verifyMs: timings.verify });
    const services = { gateway, ledger, metrics, retries: this.retries };
    const session = new X402Session(services, call, payment, paymentId, priced, terms, timings, entered);
    session.paymentIdentifier = identified.id;
    return { kind: "granted", session: { grant: session.grant, failed: session.failed, finish: session.finish } };
  }
}
