import { Receipt } from "mppx";
import type { ApiRequest } from "../http/api-request";
import type { Authorization, BillableCall, ChallengeCode } from "../billing/payment-method";
import type { ChallengePart, PaymentMethod, PaymentTerms } from "../billing/payment-methods";
import type { PricedRequest } from "../billing/schemes/payment-scheme";
import type { PaymentEnvelope, X402Payment } from "../billing/x402-payment";
import { challengeHeader, type ChargeTerms } from "./charge-challenge";
import { chargeCredential, decodesAsCredential } from "./charge-credential";

/**
 * An MPP payment's answers state their settlement as MPP's receipt (Payment-Receipt: the method, the transaction,
 * when), in place of x402's PAYMENT-RESPONSE.
 */
const MPP: PaymentEnvelope = {
  protocol: "mpp",
  receipt: ({ transaction }) => {
    const receipt = { method: "evm", reference: transaction, status: "success" as const };
    return { "Payment-Receipt": Receipt.serialize(Receipt.from({ ...receipt, timestamp: new Date().toISOString() })) };
  },
};

/**
 * The Machine Payments Protocol (an HTTP `Payment` authentication scheme) with its EVM `charge` method: a 402 carries
 * `WWW-Authenticate: Payment` beside x402's PAYMENT-REQUIRED, for the same amount; a request with `Authorization:
 * Payment` carries an EIP-3009 authorization, which is the x402 `exact` payment of the same transfer: x402 accepts,
 * settles and records it (its ledger row's method `mpp`), so both protocols share one ledger, one nonce per
 * authorization, the payer's exposure, the limits and the facilitators.
 */
export class MppPayment implements PaymentMethod<string> {
  readonly name = "mpp";
  readonly howToPay =
    "answer the WWW-Authenticate: Payment challenge (MPP's evm charge) with an Authorization: Payment credential";

  constructor(
    private readonly terms: ChargeTerms,
    private readonly x402: X402Payment,
  ) {}

  credential(_endpoint: unknown, request: ApiRequest): string | undefined {
    const header = request.headers.get("authorization");
    return header && /^payment\s/i.test(header) ? header : undefined;
  }

  plausible(header: string): boolean {
    return decodesAsCredential(header);
  }

  challenge(call: BillableCall, priced: PricedRequest): ChallengePart {
    return { headers: { "WWW-Authenticate": challengeHeader(this.terms, call, priced.offers.exact.requirements) } };
  }

  async authorize(call: BillableCall, header: string, terms: PaymentTerms): Promise<Authorization> {
    const entered = performance.now();
    const priced = await terms.priced();
    const refuse = (code: ChallengeCode, message: string) => terms.refuse(priced, code, message);
    const read = chargeCredential(header, this.terms, call, priced.offers.exact.requirements);
    if ("problem" in read) throw refuse(read.problem.code, read.problem.message);
    const value = Buffer.from(JSON.stringify(read.payment), "utf8").toString("base64");
    const payment = { value, version: 2 as const, json: read.payment };
    return this.x402.accept({ call, priced, header: payment, refuse, envelope: MPP, entered });
  }
}
