import { encodePaymentRequiredHeader } from "@x402/core/http";
import { phase, type Timings } from "../phase";
import type { PaymentPayload, PaymentRequired } from "@x402/core/types";
import { errorObject, errorStatus } from "../../core/errors";
import { jsonAnswer, type ApiAnswer } from "../../http/api-answer";
import { describeMismatch } from "../../payment/describe-mismatch";
import { FacilitatorUnavailableError, type Verdict } from "../../payment/facilitator-answers";
import type { PaymentGateway } from "../../payment/payment-gateway";
import type { ChallengeCode } from "../payment-method";
import { paymentRequiredDocument } from "../x402-challenge";
import { facilitatorUnavailable } from "../x402-price";
import { randomUUID } from "node:crypto";
import { ChannelVoucher } from "./channel-voucher";
import { holdExposure } from "./payer-exposure";
import type { Acceptance, PaymentScheme } from "./payment-scheme";

/**
 * x402 `batch-settlement`: a payer's deposit into a channel, then a cumulative voucher per request. The scheme
 * (@x402/evm, over our channel storage) checks each voucher against the channel's running total and holds the
 * channel for the request (one at a time); the channel is charged what `upto` would charge (the tokens used) or the
 * quote, or let go of. A voucher costs no chain transaction and, while the channel's chain state is fresh, no
 * facilitator call; the vouchers are claimed later, many in one transaction (server/channels/).
 */
export const batchSettlementScheme: PaymentScheme = {
  name: "batch-settlement",
  chargesUse: true,
  offer: async (gateway, call, amount) => {
    if (!call.channels) return undefined;
    const requirements = await gateway.channelRequirementsFor(amount);
    return requirements && { requirements };
  },
  accept: async (acceptance) => {
    const { services, call, offered, header, refuse } = acceptance;
    const payload = (header.version === 2 ? header.json : undefined) as PaymentPayload;
    if (!services.gateway.matches(payload, offered)) {
      throw refuse("payment_mismatch", describeMismatch(payload.accepted, offered));
    }
    const signedResource = payload.resource?.url;
    if (signedResource !== undefined && signedResource !== call.resourceUrl) {
      throw refuse("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
    }
    const hold = await depositHold(acceptance, payload);
    const timings: Timings = {};
    let verdict: Verdict;
    try {
      const parent = call.request.trace?.span;
      verdict = await phase(timings, "verify", (span) => services.gateway.verify(payload, offered, span), { parent });
    } catch (error) {
      await hold?.release();
      if (!(error instanceof FacilitatorUnavailableError)) throw error;
      services.metrics.facilitatorFailed("verify");
      throw facilitatorUnavailable(error);
    }
    if (!verdict.isValid) {
      await hold?.release();
      return rejected(acceptance, payload, verdict);
    }
    const verified = { verifyMs: timings.verify!, facilitator: verdict.facilitator };
    return new ChannelVoucher({ ...acceptance, scheme: batchSettlementScheme, payload, verdict, verified, hold });
  },
};

/**
 * A channel's deposit paid with a stream lands on chain only when the stream is charged, after it went out: its
 * amount is held against the payer's balance as any payment settled after its answer (payer-exposure.ts), and one
 * that does not fit is refused before any work.
 */
async function depositHold(acceptance: Acceptance, payload: PaymentPayload) {
  const inner = payload.payload as {
    type?: unknown;
    deposit?: { amount?: unknown };
    channelConfig?: { payer?: unknown };
  };
  const amount = inner.deposit?.amount;
  const payer = inner.channelConfig?.payer;
  if (!acceptance.call.streams || inner.type !== "deposit") return undefined;
  if (typeof amount !== "string" || !/^\d{1,78}$/.test(amount) || typeof payer !== "string") return undefined;
  const request = {
    key: `deposit:${randomUUID()}`,
    payer: payer.toLowerCase(),
    amount: BigInt(amount),
    permit2: false,
  };
  const exposure = await holdExposure(acceptance.services, request);
  if (exposure.kind === "over") throw acceptance.refuse("payer_limit_exceeded", exposure.message);
  return exposure;
}

/** The scheme's refusal of the voucher in a paid call, as its 402. */
async function rejected({ services, call, priced }: Acceptance, payload: PaymentPayload, verdict: Verdict) {
  const document = paymentRequiredDocument(call, priced, services.retries.declaration);
  const answer = await voucherRefusal(services.gateway, document, payload, verdict);
  return { kind: "answer", answer, outcome: "refused" } as const;
}

/**
 * The scheme's refusal of a voucher, as its 402: the reason code the official client reads in PAYMENT-REQUIRED's
 * `error` and, for a voucher that does not follow the channel's running total, the channel's state to resync from.
 */
export async function voucherRefusal(
  gateway: PaymentGateway,
  document: PaymentRequired,
  payload: PaymentPayload,
  verdict: Verdict,
): Promise<ApiAnswer> {
  const reason = verdict.invalidReason ?? "invalid_payment";
  const route = gateway.route(verdict.facilitator)!;
  const required = await route.paymentRequired(document.accepts, document.resource!, reason, payload);
  const detail = verdict.invalidMessage ? ` (${verdict.invalidMessage})` : "";
  return channelChallenge(
    { ...required, extensions: document.extensions },
    "payment_rejected",
    `Payment rejected: ${reason}${detail}`,
  );
}

/** A 402 whose PAYMENT-REQUIRED carries the document as given (its `error`, a reason code, included). */
export function channelChallenge(document: PaymentRequired, code: ChallengeCode, message: string): ApiAnswer {
  return jsonAnswer(
    { ...document, error: errorObject(code, message) },
    {
      status: errorStatus(code),
      headers: { "PAYMENT-REQUIRED": encodePaymentRequiredHeader(document), "Cache-Control": "no-store" },
    },
  );
}
