import { isApiError } from "../core/errors";
import type { ApiRequest } from "../http/api-request";
import { decodeBase64Json, MalformedPaymentError } from "../payment/payment-signature";
import type { Authorization, BillableCall, ChallengeCode } from "./payment-method";
import type { CallPricing, PaymentMethod, PaymentTerms, Problem } from "./payment-methods";
import type { Refusal } from "./refusal";
import type { PaymentHeader, PaymentScheme, PricedRequest, SchemeServices } from "./schemes/payment-scheme";
import { PAYMENT_SCHEMES } from "./schemes/payment-schemes";
import { paymentRequiredDocument, x402ChallengePart, x402Receipt } from "./x402-challenge";
import { priceCall, type LiveGas } from "./x402-price";
import { X402Session, type PaymentEnvelope } from "./x402-session";

export type { PaymentEnvelope } from "./x402-session";

/** What x402 billing works with: the services its schemes use, and the live gas of quotes. */
export interface X402PaymentOptions extends SchemeServices {
  /** Networks that price settlement gas live. */
  gas?: LiveGas;
}

/** The x402 payment headers a request carries: v2's PAYMENT-SIGNATURE, v1's X-PAYMENT. */
export interface X402Credential {
  v2: string | null;
  v1: string | null;
}

/** A payment signed for x402, to accept for a call: how it came, what it is, and how to refuse it. */
export interface SignedForCall {
  call: BillableCall;
  priced: PricedRequest;
  header: PaymentHeader;
  refuse(code: ChallengeCode, message: string): Refusal;
  envelope: PaymentEnvelope;
  /** When the billing of the call began (performance.now()). */
  entered: number;
}

const X402: PaymentEnvelope = { protocol: "x402", receipt: x402Receipt };

/**
 * x402 per request, whatever the scheme: quote (its part of the 402, each scheme's offer); then with a payment,
 * the scheme it was signed with accepts it (matches, claims, verifies: schemes/), the work runs, and the session
 * takes what the work is charged. No path takes a payment for work that was not done, and no answer goes out before
 * its verdict. It also prices every call the registry quotes (the price an x402 `exact` payment pays).
 */
export class X402Payment implements PaymentMethod<X402Credential>, CallPricing {
  readonly name = "x402";
  readonly howToPay =
    "Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE (x402)";
  readonly network;

  constructor(private readonly options: X402PaymentOptions) {
    this.network = options.gateway.network;
  }

  credential(_endpoint: unknown, request: ApiRequest): X402Credential | undefined {
    const v2 = request.headers.get("payment-signature");
    const v1 = request.headers.get("x-payment");
    return v2 || v1 ? { v2, v1 } : undefined;
  }

  /** Whether the header (v2's, else v1's) is base64 of a JSON object, as any payment is. */
  plausible({ v2, v1 }: X402Credential): boolean {
    try {
      const json = decodeBase64Json(v2 || v1 || "", "the payment header");
      return typeof json === "object" && json !== null && !Array.isArray(json);
    } catch {
      return false;
    }
  }

  challenge(call: BillableCall, priced: PricedRequest, problem: Problem) {
    const document = paymentRequiredDocument(call, priced, this.options.retries.declaration);
    return x402ChallengePart(document, problem, this.options.gateway.v1Network);
  }

  async authorize(call: BillableCall, credential: X402Credential, terms: PaymentTerms): Promise<Authorization> {
    const entered = performance.now();
    const priced = await terms.priced();
    const refuse = (code: ChallengeCode, message: string) => terms.refuse(priced, code, message);
    const header = paymentHeader(credential, refuse);
    return this.accept({ call, priced, header, refuse, envelope: X402, entered });
  }

  /** A payment signed for x402 (in whichever envelope it came), accepted by its scheme: the session to work in. */
  async accept(signed: SignedForCall): Promise<Authorization> {
    const { call, priced, header, refuse, envelope, entered } = signed;
    const scheme = schemeOf(header, priced, refuse);
    const offered = priced.offers[scheme.name]!.requirements;
    const acceptance = { services: this.options, call, priced, offered, header, refuse, protocol: envelope.protocol };
    const accepted = await scheme.accept(acceptance);
    if ("kind" in accepted) return accepted;
    const session = new X402Session({ services: this.options, call, priced, accepted, entered, refuse, envelope });
    return {
      kind: "granted",
      session: { grant: session.grant, timings: session.timings, failed: session.failed, finish: session.finish },
    };
  }

  /** The call's price and each scheme's offer; a facilitator that cannot say what it supports is counted. */
  price(call: BillableCall): Promise<PricedRequest> {
    return priceCall(this.options.gateway, call, PAYMENT_SCHEMES, this.options.gas).catch((error: unknown) => {
      if (isApiError(error) && error.code === "facilitator_unavailable") {
        this.options.metrics.facilitatorFailed("supported");
      }
      throw error;
    });
  }
}

type Refuse = (code: ChallengeCode, message: string) => Refusal;

/**
 * The payment header: v2 in PAYMENT-SIGNATURE (its JSON read once, for every step after), v1 in X-PAYMENT (v2 is
 * read when both come).
 */
function paymentHeader({ v2, v1 }: X402Credential, refuse: Refuse): PaymentHeader {
  if (!v2) return { value: v1!, version: 1 };
  try {
    return { value: v2, version: 2, json: decodeBase64Json(v2, "PAYMENT-SIGNATURE") };
  } catch (error) {
    if (error instanceof MalformedPaymentError) throw refuse("payment_invalid", error.message);
    throw error;
  }
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
