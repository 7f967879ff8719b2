import {
  declarePaymentIdentifierExtension,
  isValidPaymentId,
  PAYMENT_ID_MAX_LENGTH,
  PAYMENT_ID_MIN_LENGTH,
  PAYMENT_IDENTIFIER,
} from "@x402/extensions/payment-identifier";
import { errorObject, errorStatus } from "../core/errors";
import { jsonAnswer, textAnswer, type ApiAnswer } from "../http/api-answer";
import { logEvent } from "../core/log";
import type { HeldRequest, IdentifierHold, KeptAnswer, PaidAnswerStore } from "../payment/paid-answers";
import type { DecodedPayment } from "../payment/payment-signature";

/*
 * Safe retries with x402's payment-identifier extension: the caller names its payment with an id of its own; a
 * paid, whole answer is kept under the payer and that id, and the same request sent again with the same id (its
 * connection dropped) gets the kept answer instead of paying twice or being told the payment was used.
 */

/** What every 402 declares: the id is optional; whole answers are kept; streams are not replayed. */
export function paymentIdentifierDeclaration(ttlSeconds: number) {
  return {
    ...declarePaymentIdentifierExtension(false),
    description: `Optional idempotency: put an id of your own in extensions["${PAYMENT_IDENTIFIER}"].info.id of the payment. The same request sent again with the same id within ${ttlSeconds} s gets the first answer again, charged once; the same id with another request is refused (409). Streamed answers are not kept: a stream cannot be replayed.`,
  };
}

/**
 * The id a v2 payment carries, if any; a malformed one is a problem to answer. Payments echo the 402's extensions,
 * so most carry the declaration without an id: that is read as no id, and only an id is checked (its pattern; the
 * extension's JSON-schema validator compiles its schema on each call, which cost 13 ms a paid request).
 */
export function paymentIdentifierOf(payment: DecodedPayment): { id?: string; problem?: string } {
  if (payment.version !== 2) return {};
  const extension = payment.payload.extensions?.[PAYMENT_IDENTIFIER] as { info?: { id?: unknown } } | undefined;
  const id = extension?.info?.id;
  if (id === undefined) return {};
  if (typeof id !== "string" || !isValidPaymentId(id)) {
    return {
      problem: `payment-identifier: the id must be ${PAYMENT_ID_MIN_LENGTH} to ${PAYMENT_ID_MAX_LENGTH} letters, digits, - or _`,
    };
  }
  return { id };
}

/** What a retry must ask for again: the resource and the body. */
export const requestKey = (resourceUrl: string, bodySha256: string) => `${resourceUrl}\n${bodySha256}`;

/** The request a payment holds its payment-identifier `id` for. */
export function heldRequest(
  payment: Pick<DecodedPayment, "payer" | "nonce">,
  id: string,
  call: { resourceUrl: string; body: { sha256: string } },
): HeldRequest {
  return {
    payer: payment.payer,
    paymentId: id,
    nonce: payment.nonce,
    request: requestKey(call.resourceUrl, call.body.sha256),
  };
}

/**
 * How long a payment-identifier stays held by a request being answered: longer than any paid request can take
 * (every route of the model with the most timing out in turn, then verify and settle at the facilitator's limit),
 * and at least 10 minutes; short enough that an id a crashed instance held is free again soon after.
 */
export function identifierHoldMs(limits: { routes: number; upstreamTimeoutMs: number; facilitatorTimeoutMs: number }) {
  const longest = limits.routes * limits.upstreamTimeoutMs + 2 * limits.facilitatorTimeoutMs;
  return Math.max(10 * 60_000, longest + 60_000);
}

/** The kept answers of one deployment, for `ttlMs`. */
export class PaidRetries {
  /** The payment-identifier extension every 402 declares (one object: its JSON is the same each time). */
  readonly declaration;

  constructor(
    private readonly store: PaidAnswerStore,
    readonly ttlMs: number,
    /** How long an id stays held by a request being answered (identifierHoldMs). */
    private readonly holdMs = identifierHoldMs({ routes: 1, upstreamTimeoutMs: 0, facilitatorTimeoutMs: 0 }),
  ) {
    this.declaration = paymentIdentifierDeclaration(ttlMs / 1000);
  }

  /**
   * Holds the payer's id for this payment while its request is answered (holdMs at most: a process that dies
   * holding it frees it then), or finds the answer kept under it, or that another payment holds it.
   */
  hold(held: HeldRequest): Promise<IdentifierHold> {
    const now = Date.now();
    return this.store.hold(held, now, now + this.holdMs);
  }

  /** Lets go of an id whose request was not delivered whole; a failure only leaves it held until holdMs. */
  async release(held: HeldRequest): Promise<void> {
    try {
      await this.store.release(held);
    } catch (error) {
      logEvent("error", "paid_answer_release_failed", { error: (error as Error).message });
    }
  }

  /**
   * A paid call under `held`'s id ended: a whole answer delivered is kept under it, anything else (a refusal, a
   * stream, which is not kept) lets go of it.
   */
  ended(held: HeldRequest, finished: { answer: ApiAnswer; outcome: string }): Promise<void> {
    const delivered = finished.outcome === "paid" || finished.outcome === "settle_unknown";
    return delivered ? this.keep(finished.answer, held) : this.release(held);
  }

  /**
   * Keeps a whole paid answer before it is sent. Failing to keep it costs the caller only a retry that pays again:
   * the id is let go of, not left held.
   */
  async keep(answer: ApiAnswer, kept: HeldRequest): Promise<void> {
    if (typeof answer.body !== "string") return this.release(kept);
    const now = Date.now();
    try {
      const whole = { ...kept, status: answer.status, headers: { ...answer.headers }, body: answer.body };
      await this.store.keep(whole, now, now + this.ttlMs);
    } catch (error) {
      logEvent("error", "paid_answer_keep_failed", { error: (error as Error).message });
      await this.release(kept);
    }
  }
}

/** The kept answer again, marked as a replay (the payment it names was charged once, for the first). */
export function replayedAnswer(kept: KeptAnswer): ApiAnswer {
  return textAnswer(kept.body, kept.headers["content-type"] ?? "application/json", {
    status: kept.status,
    headers: { ...kept.headers, "idempotent-replayed": "true" },
  });
}

/** A new payment under an id another payment holds for `request`: the same request is busy, another conflicts. */
export function identifierHeld(held: HeldRequest, request: string): ApiAnswer {
  return request === held.request ? identifierBusy(held.paymentId) : identifierConflict(held.paymentId);
}

/** The same id sent again while its first request is still answered by another payment: refused, nothing charged. */
function identifierBusy(id: string): ApiAnswer {
  const message = `payment-identifier ${id} belongs to a request that is still being answered; this payment was not taken. Send it again shortly with the same id: a whole answer is then replayed (a stream is not kept: its retry needs a new payment)`;
  return jsonAnswer(
    { error: errorObject("payment_identifier_busy", message) },
    { status: errorStatus("payment_identifier_busy") },
  );
}

/** The same id sent with another request: refused, nothing charged. */
export function identifierConflict(id: string): ApiAnswer {
  const message = `payment-identifier ${id} was used for another request (another resource or body); choose a new id for a new request`;
  return jsonAnswer(
    { error: errorObject("payment_identifier_conflict", message) },
    {
      status: errorStatus("payment_identifier_conflict"),
    },
  );
}
