import type { PaymentRequirements } from "@x402/core/types";
import { ApiError } from "../../core/errors";
import { phase, type Timings } from "../phase";
import { describeMismatch } from "../../payment/describe-mismatch";
import type { KeptAnswer, HeldRequest } from "../../payment/paid-answers";
import { decodePaymentJson, MalformedPaymentError, type DecodedPayment } from "../../payment/payment-signature";
import { decodeV1Payment, facilitatorTerms, v1Mismatch, v1Requirements } from "../../payment/x402-v1";
import { heldRequest, identifierConflict, identifierHeld, paymentIdentifierOf, replayedAnswer } from "../paid-retries";
import type { Verified } from "../payment-method";
import { DEFAULT_STRICT_AFTER_UNPAID_MS } from "../../../config/limits";
import { resourceInfo } from "../x402-challenge";
import { facilitatorUnavailable } from "../x402-price";
import { uptoDeadlineProblem } from "../usage-stream-settlement";
import type { Acceptance, AcceptedPayment, PaymentScheme } from "./payment-scheme";
import { holdExposure, holdSettledFirst, needsHold, signedExposure, type HeldExposure } from "./payer-exposure";
import { SignedPayment } from "./signed-payment";
import { paymentRow } from "./taking";
import type { Authorization } from "../payment-method";
import type { Span } from "../../tracing/span";

type Terms = ReturnType<typeof facilitatorTerms>;
type Answer = Extract<Authorization, { kind: "answer" }>;

/**
 * An `exact` or `upto` payment, accepted: decoded, matched to this request, its signature checked locally, its
 * payment-identifier held (or a retry answered from what was kept under it), its nonce claimed in the ledger (a
 * signature is used once), and verified, beside the work's start in overlap order. Each step that refuses throws
 * the answer (a Refusal), so each reads as what it checks.
 */
export async function acceptSigned(scheme: PaymentScheme, acceptance: Acceptance): Promise<AcceptedPayment | Answer> {
  const { services, call, header, refuse } = acceptance;
  const payment = decode(acceptance);
  const signedFor = await match(payment, acceptance);
  const terms = facilitatorTerms(payment, signedFor, header.version === 1 ? v1Of(acceptance) : undefined);
  const identified = paymentIdentifierOf(payment);
  if (identified.problem) throw refuse("payment_invalid", identified.problem);
  const signature = await services.signatures.check(payment, signedFor);
  if (signature === "forged") {
    throw refuse("payment_rejected", "Payment rejected: its signature is not the payer's (checked before any work)");
  }
  // A contract wallet's signature that the chain cannot judge now: nothing is written, nobody else is asked.
  if (signature === "unknown") {
    throw new ApiError(
      "service_unavailable",
      "This payment's signature is a contract wallet's, and the chain cannot be read now to check it; nothing was charged: try again shortly",
      { headers: { "Retry-After": "5" } },
    );
  }
  const identifier = identified.id ? heldRequest(payment, identified.id, call) : undefined;
  if (identifier) {
    const hold = await services.retries.hold(identifier);
    if (hold.kind === "kept") return replay(acceptance, hold.answer, identifier, terms);
    if (hold.kind === "busy")
      return { kind: "answer", answer: identifierHeld(identifier, hold.request), outcome: "refused" };
  }
  let hold: HeldExposure | undefined;
  try {
    const paymentId = await claim(acceptance, scheme, payment, identified.id !== undefined);
    const inDebt = await indebted(acceptance, payment.payer);
    // A stream charged its use is taken after it is delivered: a payer in debt pays streams before they are sent.
    if (inDebt && scheme.chargesUse && call.streams) {
      await services.ledger.update(paymentId, { status: "failed", failureReason: "payer_in_debt" });
      throw refuse(
        "payer_in_debt",
        "A streamed answer this payer was sent went unpaid lately, so its streams are paid settled-first: pay this one with exact",
      );
    }
    let overlapped = signature === "valid" && overlapOrder(acceptance) && !inDebt;
    const exposure = needsHold(scheme, acceptance, overlapped)
      ? await holdExposure(services, signedExposure(scheme, payment, acceptance.priced.amount))
      : undefined;
    if (exposure?.kind === "over" && scheme.chargesUse) {
      await services.ledger.update(paymentId, { status: "failed", failureReason: "payer_limit_exceeded" });
      throw refuse("payer_limit_exceeded", exposure.message);
    }
    if (exposure?.kind === "held") hold = exposure;
    else {
      // Settled before its answer leaves (an exact stream over the limit too), but never out of funds held for others.
      overlapped &&= exposure === undefined;
      const first = await holdSettledFirst(services, signedExposure(scheme, payment, acceptance.priced.amount));
      if (first?.kind === "over") {
        await services.ledger.update(paymentId, { status: "failed", failureReason: "payer_limit_exceeded" });
        throw refuse("payer_limit_exceeded", first.message);
      }
      hold = first;
    }
    const verdict = verifyClaimed(acceptance, paymentId, terms);
    // In strict order the verdict comes first: a refusal is answered here, before any work.
    if (!overlapped) await verdict;
    const start = { services, call, scheme, payment, paymentId, terms, verdict, overlapped, identifier, hold };
    return new SignedPayment(start);
  } catch (error) {
    await hold?.release().catch(() => undefined);
    // Refused before any work: the id is free again for the same request with a good payment.
    if (identifier) await services.retries.release(identifier);
    throw error;
  }
}

/** The v1 form of the call's `exact` terms. */
function v1Of({ services, call, priced }: Acceptance) {
  return v1Requirements(priced.offers.exact!.requirements, services.gateway.v1Network!, resourceInfo(call));
}

/** The payment as sent: x402 v2 (its shape checked strictly), or v1. */
function decode(acceptance: Acceptance): DecodedPayment {
  const { header, services } = acceptance;
  try {
    if (header.version === 2) return decodePaymentJson(header.json, services.gateway.network.kind);
    return decodeV1Payment(header.value, services.gateway.network);
  } catch (error) {
    if (error instanceof MalformedPaymentError) throw acceptance.refuse("payment_invalid", error.message);
    throw error;
  }
}

/**
 * The payment is for exactly this request: the scheme's terms (and, v2, the resource it was signed for). Returns the
 * requirements it was signed for: the ones offered, or the same terms as another facilitator serves them.
 */
async function match(payment: DecodedPayment, acceptance: Acceptance): Promise<PaymentRequirements> {
  const { services, call, offered, refuse, header } = acceptance;
  const { gateway } = services;
  if (header.version === 1) {
    if (!(await gateway.acceptsV1().catch(() => true))) {
      throw refuse(
        "payment_invalid",
        `This deployment's facilitator does not settle x402 v1 payments on ${gateway.v1Network}; pay with x402 v2: sign the requirements in the PAYMENT-REQUIRED header and send them in PAYMENT-SIGNATURE`,
      );
    }
    // v1 signs no resource: a payment is bound to its amount and pay-to (and the nonce, once).
    const problem = v1Mismatch(payment, v1Of(acceptance));
    if (problem) throw refuse("payment_mismatch", problem);
    return offered;
  }
  const signedFor = await gateway.signedFor(payment.payload, offered);
  if (!signedFor) throw refuse("payment_mismatch", describeMismatch(payment.payload.accepted, offered));
  const late = uptoDeadlineProblem(payment.deadline);
  if (late) throw refuse("payment_invalid", late);
  const signedResource = payment.payload.resource?.url;
  if (signedResource !== undefined && signedResource !== call.resourceUrl) {
    throw refuse("payment_mismatch", `Payment was made for ${signedResource}, not ${call.resourceUrl}`);
  }
  return signedFor;
}

/**
 * Whether the call's work may start while the facilitator verifies (and a stream priced up front be passed on while
 * it settles): in overlap order, for work that is an upstream call.
 */
function overlapOrder({ services, call }: Acceptance): boolean {
  return services.settlement?.order === "overlap" && call.overlapsVerify === true;
}

/**
 * Whether the payer left a streamed answer unpaid within SETTLEMENT_STRICT_SECONDS (any instance's ledger says so):
 * it is then served settled-first. Asked only where it changes something: a call that could overlap, or an upto
 * stream.
 */
async function indebted(acceptance: Acceptance, payer: string): Promise<boolean> {
  const { services, call, header } = acceptance;
  const upto = header.version === 2 && acceptance.offered.scheme === "upto";
  if (!overlapOrder(acceptance) && !(upto && call.streams)) return false;
  const strictMs = services.settlement?.strictAfterUnpaidMs ?? DEFAULT_STRICT_AFTER_UNPAID_MS;
  return services.ledger.unpaidSince(payer, new Date(Date.now() - strictMs));
}

/** A retry of a delivered request under its payment-identifier: its kept answer, charged once (for the first). */
async function replay(acceptance: Acceptance, kept: KeptAnswer, held: HeldRequest, terms: Terms): Promise<Answer> {
  if (kept.request !== held.request) {
    return { kind: "answer", answer: identifierConflict(kept.paymentId), outcome: "refused" };
  }
  const { services, header } = acceptance;
  // The same payment (the header its row keeps, byte for byte) replays; one signed anew is verified, never settled.
  const same = kept.nonce === held.nonce && (await services.ledger.findByNonce(held.nonce))?.paymentSignature;
  const again = same === header.value.trim() || (await verify(acceptance, terms)).isValid;
  if (!again) throw acceptance.refuse("payment_rejected", "The payment for this retry was rejected by the facilitator");
  return { kind: "answer", answer: replayedAnswer(kept), outcome: "replayed" };
}

/** The nonce, claimed in the ledger before anything else sees the payment: a signature is used once. */
async function claim(
  acceptance: Acceptance,
  scheme: PaymentScheme,
  payment: DecodedPayment,
  identified: boolean,
): Promise<number> {
  const row = { nonce: payment.nonce, payer: payment.payer, scheme: scheme.name };
  const paymentId = await acceptance.services.ledger.claim(paymentRow(acceptance, row));
  if (paymentId !== undefined) return paymentId;
  const retry = identified
    ? " (if its request is still being answered, send it again shortly with the same payment-identifier to get its answer)"
    : "";
  throw acceptance.refuse(
    "payment_already_used",
    `This payment signature has already been used; sign a new payment${retry}`,
  );
}

/** The facilitator's verdict on a payment; one it cannot give is counted and answered 503. */
async function verify({ services }: Acceptance, terms: Terms, span?: Span) {
  try {
    return await services.gateway.verify(terms.payload, terms.requirements, span);
  } catch (error) {
    services.metrics.facilitatorFailed("verify");
    throw facilitatorUnavailable(error);
  }
}

/** The facilitator's verdict on the claimed payment, recorded; the time it took and who gave it. */
async function verifyClaimed(acceptance: Acceptance, paymentId: number, terms: Terms): Promise<Verified> {
  const { ledger } = acceptance.services;
  const timings: Timings = {};
  let verification;
  try {
    const parent = acceptance.call.request.trace?.span;
    verification = await phase(timings, "verify", (span) => verify(acceptance, terms, span), { parent });
  } catch (error) {
    await ledger.update(paymentId, { status: "failed", failureReason: "facilitator_unavailable" });
    throw error;
  }
  const verifyMs = timings.verify!;
  const { facilitator } = verification;
  if (!verification.isValid) {
    const reason = verification.invalidReason ?? "invalid_payment";
    await ledger.update(paymentId, { status: "failed", failureReason: reason, verifyMs, facilitator });
    const detail = verification.invalidMessage ? ` (${verification.invalidMessage})` : "";
    throw acceptance.refuse("payment_rejected", `Payment rejected by the facilitator: ${reason}${detail}`);
  }
  await ledger.update(paymentId, { status: "verified", verifyMs, facilitator });
  return { verifyMs, facilitator };
}
