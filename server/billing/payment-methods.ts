import type { KeyCarriers } from "../auth/key-principal";
import { errorObject, errorStatus } from "../core/errors";
import { textAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import { atomicToDecimal } from "../core/money";
import type { Authorization, BillableCall, ChallengeCode } from "./payment-method";
import { Refusal } from "./refusal";
import type { PricedRequest } from "./schemes/payment-scheme";

/** What a paid endpoint says of how it is paid for: the prepaid key where it takes one, and where its API carries it. */
export interface PaymentAccess {
  access: readonly string[];
  keyCarriers?: KeyCarriers;
}

/**
 * One way a call is paid for (a prepaid key, x402, MPP), as billing asks the registry of them (payment-methods.ts):
 * each finds its credential on a request, adds its challenge to the one 402 and authorizes a call paid with it.
 * Billing names no method: adding one is its folder and a line in the registry.
 */
export interface PaymentMethod<Credential = unknown> {
  /** The method's name: the metrics' `payment` label, and the ledger's `method` for the protocols. */
  readonly name: string;
  /** How a 402's message says to pay with it, after the price (`sign ... and repeat the request with ...`). */
  readonly howToPay?: string;
  /** The credential of this method the request carries, where its endpoint takes the method. */
  credential(endpoint: PaymentAccess, request: ApiRequest): Credential | undefined;
  /**
   * Whether the credential is worth reading the body for: one that does not even decode is unpaid work (a quote),
   * counted before the body is read (context/quote-limited.ts). True unless told.
   */
  plausible?(credential: Credential): boolean;
  /** Its part of the call's 402 at `priced` (none where it offers nothing for this call). */
  challenge?(call: BillableCall, priced: PricedRequest, problem: Problem): ChallengePart | undefined;
  /** The call, paid with the credential: the 402 (or refusal) to answer, or the session to run the work in. */
  authorize(call: BillableCall, credential: Credential, terms: PaymentTerms): Promise<Authorization>;
  /** What a limit's early admission knows the credential's payer by, between calls (a prepaid key's code). */
  admissionKey?(credential: Credential): string | undefined;
}

/** What a 402 says: its error code and message. */
export interface Problem {
  code: ChallengeCode;
  message: string;
}

/** A method's part of a 402: its headers, and (one method's: x402's document) the JSON body beside the error. */
export interface ChallengePart {
  headers?: Record<string, string>;
  /** The body: a JSON object's text whose last member is the error object (`{..., "error": {...}}`). */
  body?: string;
}

/** What a method authorizing a call may ask of billing: the call's price, computed once, and its 402. */
export interface PaymentTerms {
  /** The call's price and each x402 scheme's offer (with live settlement gas where priced so), asked once a call. */
  priced(): Promise<PricedRequest>;
  /** The 402 with every method's challenge at `priced`, refusing with `code` and `message`: to throw. */
  refuse(priced: PricedRequest, code: ChallengeCode, message: string): Refusal;
}

/** A credential found on a request, with the method that reads it. */
export interface FoundCredential {
  method: PaymentMethod;
  credential: unknown;
}

/** What the registry prices calls with and states prices in: x402's pricing, the network's USDC. */
export interface CallPricing {
  price(call: BillableCall): Promise<PricedRequest>;
  network: { id: string; usdc: { decimals: number } };
}

/**
 * The payment methods of a deployment, in the order a request's credential is looked for (a prepaid key where its
 * endpoint takes one, then each protocol): billing asks this registry, as x402's resource server asks its schemes,
 * and names no method. One 402 carries every method's challenge, for one price.
 */
export class PaymentMethods {
  private readonly list: PaymentMethod[] = [];

  constructor(private readonly pricing: CallPricing) {}

  /** The methods, in the order their credentials are looked for. */
  get methods(): readonly PaymentMethod[] {
    return this.list;
  }

  /** Adds a method, looked for after those registered before it. */
  register<Credential>(method: PaymentMethod<Credential>): this {
    this.list.push(method as PaymentMethod);
    return this;
  }

  /** The first credential the request carries, of the methods its endpoint takes; undefined when it carries none. */
  credentialOf(endpoint: PaymentAccess, request: ApiRequest): FoundCredential | undefined {
    for (const method of this.methods) {
      const credential = method.credential(endpoint, request);
      if (credential !== undefined) return { method, credential };
    }
    return undefined;
  }

  /** Whether the request carries a credential worth reading its body for (context/quote-limited.ts). */
  carriesPlausible(endpoint: PaymentAccess, request: ApiRequest): boolean {
    const found = this.credentialOf(endpoint, request);
    return found !== undefined && (found.method.plausible?.(found.credential) ?? true);
  }

  /** The call authorized by the method whose credential it carries, or its 402 when it carries none. */
  async authorize(call: BillableCall, found: FoundCredential | undefined): Promise<Authorization> {
    const terms = this.termsOf(call);
    try {
      if (found) return await found.method.authorize(call, found.credential, terms);
      const priced = await terms.priced();
      throw terms.refuse(priced, "payment_required", this.required(priced));
    } catch (error) {
      if (error instanceof Refusal) return error.authorization;
      throw error;
    }
  }

  /** The call's price, computed once, and its 402 with every method's challenge. */
  private termsOf(call: BillableCall): PaymentTerms {
    let pricing: Promise<PricedRequest> | undefined;
    return {
      priced: () => (pricing ??= this.pricing.price(call)),
      refuse: (priced, code, message) =>
        new Refusal({
          kind: "answer",
          answer: this.challenge(call, priced, code, message),
          outcome: code === "payment_required" ? "quoted" : "refused",
        }),
    };
  }

  /** What a 402 asking for payment says: the price, then how each method pays it. */
  private required(priced: PricedRequest): string {
    const { network } = this.pricing;
    const total = `${atomicToDecimal(priced.amount, network.usdc.decimals)} USD`;
    const ways = this.methods.flatMap((method) => (method.howToPay ? [method.howToPay] : []));
    return `Payment required: ${total} in USDC on ${network.id}. ${ways.join("; or ")}.`;
  }

  /**
   * One 402: every method's headers, and the body one of them writes (x402's document beside the error object;
   * the error object alone when none does).
   */
  private challenge(call: BillableCall, priced: PricedRequest, code: ChallengeCode, message: string) {
    const problem = { code, message };
    const parts = this.methods.flatMap((method) => {
      const part = method.challenge?.(call, priced, problem);
      return part ? [part] : [];
    });
    const headers: Record<string, string> = { "Cache-Control": "no-store" };
    for (const part of parts) Object.assign(headers, part.headers);
    const body = parts.find((part) => part.body !== undefined)?.body;
    return textAnswer(body ?? JSON.stringify({ error: errorObject(code, message) }), "application/json", {
      status: errorStatus(code),
      headers,
    });
  }
}
