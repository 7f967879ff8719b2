import type { PaymentRequirements } from "@x402/core/types";
import type { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import type { Settlement } from "../../payment/facilitator-answers";
import type { HeldRequest } from "../../payment/paid-answers";
import type { PaymentGateway } from "../../payment/payment-gateway";
import type { LocalSignatureCheck } from "../../payment/local-signature";
import type { PayerFundsSource } from "../../payment/payer-funds";
import type { PayerHoldStore } from "../../payment/payer-holds";
import type { Authorization, BillableCall, ChallengeCode, Verified, X402Services } from "../payment-method";
import type { Refusal } from "../refusal";
import type { SettlementMode } from "../settlements";
import type { PaymentScheme as LedgerScheme } from "../../core/payment-scheme";
import type { PaymentProtocol } from "../../core/payment-method-name";

export type SchemeName = LedgerScheme;

/** What a 402 offers of one scheme: the requirements to sign, and the extensions they need declared. */
export interface SchemeOffer {
  requirements: PaymentRequirements;
  extensions?: Record<string, unknown>;
}

/** A call's price and what each scheme offers for it (`exact` always; the others where they are offered). */
export interface PricedRequest {
  amount: bigint;
  /** The quote's breakdown, the 402's `extensions.quote`. */
  quote: Record<string, unknown>;
  offers: { exact: SchemeOffer } & Partial<Record<SchemeName, SchemeOffer>>;
}

/** What accepting a payment works with, beside the x402 services. */
export interface SchemeServices extends X402Services {
  /** Checks a payment's signature where it was made, before anyone else sees it. */
  signatures: LocalSignatureCheck;
  /** Reads what a payer can pay, on chain. */
  funds: PayerFundsSource;
  /** What each payer owes at once (payer-holds.ts). */
  payerHolds: PayerHoldStore;
  /** The deployment's `batch-settlement` scheme, where it offers channels: a voucher's request holds its channel. */
  channels?: BatchSettlementEvmScheme;
  /** The order of verify, work and settlement (ServiceConfig.settlement); `strict` unless told. */
  settlement?: { order: "overlap" | "strict"; strictAfterUnpaidMs: number };
}

/** The payment header as sent: x402 v2 in PAYMENT-SIGNATURE (its JSON decoded), or v1 in X-PAYMENT. */
export type PaymentHeader = { value: string; version: 2; json: unknown } | { value: string; version: 1 };

/** What a scheme accepts a payment for: the call, its price, the scheme's requirements in its 402, the header. */
export interface Acceptance {
  services: SchemeServices;
  call: BillableCall;
  priced: PricedRequest;
  offered: PaymentRequirements;
  header: PaymentHeader;
  /** The payment refused: the 402 with the call's terms, `code` and `message`, to throw. */
  refuse(code: ChallengeCode, message: string): Refusal;
  /** The protocol the payment came by (its ledger row's `method`). */
  protocol: PaymentProtocol;
}

/**
 * What taking an amount came to: taken (on chain, or committed to the channel); unknown (the facilitator failed,
 * or the transfer is pending: it may land); refused (nothing moved).
 */
export type Taking =
  | { kind: "taken"; settlement: Settlement; settleMs: number }
  | { kind: "unknown"; reason: string; transaction?: string; facilitator?: string; settleMs: number }
  | { kind: "refused"; reason: string; message?: string; facilitator?: string; settleMs: number };

/**
 * A payment accepted for one call, as the session drives it whatever its scheme: the work runs, then the payment
 * takes what the work is charged (or is released), and the ledger records what that came to.
 */
export interface AcceptedPayment {
  readonly scheme: PaymentScheme;
  readonly payer: string;
  /** The payment's key in the ledger: its nonce (a channel's id, for a voucher). */
  readonly nonce: string;
  readonly version: 1 | 2;
  /** The facilitator's verdict: rejects with the Refusal to answer, or the facilitator's failure. */
  readonly verdict: Promise<Verified>;
  /** How it is taken against the answer (settlements.ts): the session follows it, whatever the scheme. */
  readonly settles: SettlementMode;
  /** Unix seconds by which the payment must be taken (upto's Permit2 deadline). */
  readonly deadline?: number;
  /** The caller's payment-identifier, held for this payment: a whole answer is kept under it for a retry. */
  readonly identifier?: HeldRequest;
  /** Takes `amount` (at most the price), at the facilitator that verified it; a facilitator failure is `unknown`. */
  take(amount: bigint): Promise<Taking>;
  /**
   * Records what taking `amount` came to; `unpaid` (a stream passed on while refused): what it delivered. A database
   * away delays the record, never loses it.
   */
  record(amount: bigint, taking: Taking, upstreamMs: number, unpaid?: bigint): Promise<void>;
  /** Nothing is taken: the work failed (`reason`), or passed nothing on. */
  release(reason: string, upstreamMs: number): Promise<void>;
}

/**
 * One x402 payment scheme: how a 402 offers it, how a payment signed with it is matched and claimed, and what it is
 * charged after the work (the price, or the tokens used, which also decides how a stream is settled: for its price
 * from the start, or on its usage as it passes).
 */
export interface PaymentScheme {
  readonly name: SchemeName;
  /** Charged what the work used (the tokens, for a call billed in them; the price otherwise), not its price. */
  readonly chargesUse: boolean;
  /** The requirements for a call priced `amount` (the most it may be charged), or none where it is not offered. */
  offer(gateway: PaymentGateway, call: BillableCall, amount: bigint): Promise<SchemeOffer | undefined>;
  /** Matches a payment to the call and claims it (throws a Refusal), or answers it from what was kept (a retry). */
  accept(acceptance: Acceptance): Promise<AcceptedPayment | Extract<Authorization, { kind: "answer" }>>;
}
