import { isApiError } from "../errors";
import { atomicToDecimal } from "../money";
import { decodeBase64Json, MalformedPaymentError } from "../payment/payment-signature";
import type { Authorization, BillableCall, ChallengeCode, PaymentMethod } from "./payment-method";
import { Refusal } from "./refusal";
import type { PaymentHeader, PaymentScheme, PricedRequest, SchemeServices } from "./schemes/payment-scheme";
import { PAYMENT_SCHEMES } from "./schemes/payment-schemes";
import { paymentChallenge, paymentRequiredDocument } from "./x402-challenge";
import { priceCall, type LiveGas } from "./x402-price";
import { X402Session } from "./x402-session";

/** What x402 billing works with: the services its schemes use, and the live gas of quotes. */
export interface X402PaymentOptions extends SchemeServices {
  /** Networks that price settlement gas live. */
  gas?: LiveGas;
}

/**
 * x402 per request, whatever the scheme: quote (402, each scheme's offer); then with a payment, the scheme it was
 * signed with accepts it (matches, claims, verifies: schemes/), the work runs, and the session takes what the work
 * is charged. No path takes a payment for work that was not done, and no answer goes out before its verdict.
 */
export class X402Payment implements PaymentMethod {
  constructor(private readonly options: X402PaymentOptions) {}

  async authorize(call: BillableCall): Promise<Authorization> {
    const entered = performance.now();
    const { gateway } = this.options;
    const priced = await this.price(call);
    const refuse = (code: ChallengeCode, message: string) => new Refusal(this.challenge(call, priced, code, message));
    try {
      const header = paymentHeader(call, refuse);
      if (!header) {
        const total = `${atomicToDecimal(priced.amount, gateway.network.usdc.decimals)} USD`;
        throw refuse(
          "payment_required",
          `Payment required: ${total} in USDC on ${gateway.network.id}. Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE.`,
        );
      }
      const scheme = schemeOf(header, priced, refuse);
      const offered = priced.offers[scheme.name]!.requirements;
      const accepted = await scheme.accept({ services: this.options, call, priced, offered, header, refuse });
      if ("kind" in accepted) return accepted;
      const session = new X402Session({ services: this.options, call, priced, accepted, entered });
      return {
        kind: "granted",
        session: { grant: session.grant, timings: session.timings, failed: session.failed, finish: session.finish },
      };
    } catch (error) {
      if (error instanceof Refusal) return error.authorization;
      throw error;
    }
  }

  /** The call's price and each scheme's offer; a facilitator that cannot say what it supports is counted. */
  private price(call: BillableCall): Promise<PricedRequest> {
    return priceCall(this.options.gateway, call, PAYMENT_SCHEMES, this.options.gas).catch((error: unknown) => {
      if (isApiError(error) && error.code === "facilitator_unavailable") {
        this.options.metrics.facilitatorFailed("supported");
      }
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
    const document = paymentRequiredDocument(call, priced, this.options.retries.declaration);
    return {
      kind: "answer",
      answer: paymentChallenge(document, code, message, this.options.gateway.v1Network),
      outcome: code === "payment_required" ? "quoted" : "refused",
    };
  }
}

type Refuse = (code: ChallengeCode, message: string) => Refusal;

/**
 * The payment header: v2 in PAYMENT-SIGNATURE (its JSON read once, for every step after), v1 in X-PAYMENT (v2 is
 * read when both come).
 */
function paymentHeader(call: BillableCall, refuse: Refuse): PaymentHeader | undefined {
  const v2 = call.request.headers.get("payment-signature");
  if (v2) {
    try {
      return { value: v2, version: 2, json: decodeBase64Json(v2, "PAYMENT-SIGNATURE") };
    } catch (error) {
      if (error instanceof MalformedPaymentError) throw refuse("payment_invalid", error.message);
      throw error;
    }
  }
  const v1 = call.request.headers.get("x-payment");
  return v1 ? { value: v1, version: 1 } : undefined;
}

/** The scheme a payment was signed with, among those the 402 offered for this call (x402 v1 has only `exact`). */
function schemeOf(header: PaymentHeader, priced: PricedRequest, refuse: Refuse): PaymentScheme {
  const signed = header.version === 2 && (header.json as { accepted?: { scheme?: unknown } } | null)?.accepted?.scheme;
  // A payload that names no scheme is read as `exact`, whose strict decoding says what is wrong with it.
  const name = typeof signed === "string" ? signed : "exact";
  const scheme = PAYMENT_SCHEMES.find((candidate) => candidate.name === name && priced.offers[candidate.name]);
  if (scheme) return scheme;
  throw refuse(
    "payment_mismatch",
    `This request is not offered with the ${name} scheme here (it offers ${Object.keys(priced.offers).join(", ")}); sign one of the requirements in PAYMENT-REQUIRED`,
  );
}
