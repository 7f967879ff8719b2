import type { SettleResponse } from "@x402/core/types";
import type { Settlement } from "../payment/facilitator-answers";
import { errorObject } from "../errors";
import { SseEvent, type EventStream } from "../http/event-stream";
import type { PreparedAnswer } from "./payment-method";
import {
  facilitatorOf,
  recordSettled,
  recordSettleUnknown,
  settleVerified,
  type StreamPayment,
} from "./stream-settlement";
import type { StreamMeter } from "./stream-meter";

/** What an `exact` stream passed on while its payment settles works with. */
export interface SettlingPayment extends StreamPayment {
  /** The price the payment settles. */
  amount: bigint;
  /** What a stream that passed `outputTokens` on delivered, at the quote's rates (all of it when unknown). */
  delivered(outputTokens: number | undefined): bigint;
  /** Told the settlement's time once it is in. */
  settled(settleMs: number): void;
}

type Stream = Extract<PreparedAnswer, { kind: "stream" }>;

/**
 * An `exact` stream passed on from its first event while its payment settles (SETTLEMENT_ORDER=overlap). Its end
 * (`[DONE]`, or the upstream's end) waits for the settlement, so the final usage event can state the transaction and
 * no refused payment ends in a complete answer. A refused settlement ends the stream at once with an error event,
 * abandons the upstream, and records what was passed on until then (`unpaid`, at the quote's rates): the ledger row
 * of the payer then serves its next calls settle-first. A settlement whose outcome is unknown is recorded as such and
 * the stream goes on, as a whole answer's would. Resolves `settlement` with the facilitator's answer when it
 * settled.
 */
export function streamedWhileSettling(
  answer: Stream,
  payment: SettlingPayment,
): { body: EventStream; settlement: Promise<SettleResponse | undefined> } {
  const meter = payment.call.usage?.streamMeter(payment.call.quote.tokens?.maxOutput ?? 0);
  const outcome = settle(payment);
  // The settlement runs beside the stream, and on after it was cut or its caller left: a draining process waits.
  payment.services.keep(outcome);
  const paid = outcome.then((result) => result.kind !== "refused");
  void outcome.then(async (result) => {
    if (result.kind === "refused") await recordUnpaid(payment, result, meter?.result(false));
  });
  const failWith = answer.failWith ?? chatStreamError;
  const body = passedWhileSettling(answer.stream.body, paid, meter, () =>
    failWith(
      "settlement_failed",
      "Settlement failed: the payment was refused while the answer streamed; it was cut short",
    ),
  );
  return { body, settlement: outcome.then((result) => (result.kind === "paid" ? result.settlement : undefined)) };
}

type Outcome =
  | { kind: "paid"; settlement: SettleResponse }
  | { kind: "unknown" }
  | { kind: "refused"; reason: string; settleMs: number; facilitator: string };

/** Settles the price; records a settlement and an unknown outcome (a refused one is recorded with what passed). */
async function settle(payment: SettlingPayment): Promise<Outcome> {
  const { metrics } = payment.services;
  const { amount } = payment;
  const started = performance.now();
  let settlement: Settlement;
  try {
    settlement = await settleVerified(payment);
  } catch (error) {
    metrics.facilitatorFailed("settle");
    const { message } = error as Error;
    await recordSettleUnknown(payment, amount, message, undefined, performance.now() - started, facilitatorOf(error));
    return { kind: "unknown" };
  }
  const settleMs = performance.now() - started;
  payment.settled(settleMs);
  const { facilitator } = settlement;
  if (!settlement.success && settlement.errorReason === "settlement_pending" && settlement.transaction) {
    await recordSettleUnknown(payment, amount, "settlement_pending", settlement.transaction, settleMs, facilitator);
    return { kind: "unknown" };
  }
  if (!settlement.success) {
    return { kind: "refused", reason: settlement.errorReason ?? "settlement_failed", settleMs, facilitator };
  }
  await recordSettled(payment, amount, settlement, settleMs);
  return { kind: "paid", settlement };
}

/** The settlement was refused: what the stream passed on, at the quote's rates, is what it delivered unpaid. */
async function recordUnpaid(
  payment: SettlingPayment,
  refused: { reason: string; settleMs: number; facilitator: string },
  outputTokens: number | undefined,
): Promise<void> {
  const unpaidAmount = payment.delivered(outputTokens);
  const { paymentId, upstreamMs, services } = payment;
  const { reason, facilitator, settleMs } = refused;
  await services.writes.write("ledger_update", { paymentId, status: "unpaid" }, () =>
    services.ledger.update(paymentId, {
      status: "unpaid",
      failureReason: reason,
      unpaidAmount,
      facilitator,
      upstreamMs,
      settleMs,
    }),
  );
  payment.services.metrics.deliveredUnpaid(payment.call.endpoint, payment.call.quote.model, unpaidAmount);
  payment.log("unpaid", refused.reason, undefined, unpaidAmount);
}

/** Chat's error event (an OpenAI error object), for streams whose API has no error event of its own. */
export function chatStreamError(code: "settlement_failed" | "payment_expired", message: string): SseEvent {
  return SseEvent.of({ error: errorObject(code, message) });
}

const REFUSED = Symbol("refused");

/**
 * Passes the events on, metered, but for the end: the `[DONE]` event and the close wait for `paid`. When `paid`
 * says no, the stream ends with `failed()`'s event, at once, whatever it was waiting for, and the source is cancelled.
 */
export function passedWhileSettling(
  source: EventStream,
  paid: Promise<boolean>,
  meter: StreamMeter | undefined,
  failed: () => SseEvent,
): EventStream {
  const upstream = source.getReader();
  /** Settles with REFUSED when `paid` says no; never otherwise. Raced only while the settlement is under way. */
  const refused = paid.then((yes) => (yes ? new Promise<never>(() => undefined) : REFUSED));
  let settledPaid = false;
  void paid.then((yes) => (settledPaid = yes));
  let cancelled = false;
  const refuse = async (controller: ReadableStreamDefaultController<SseEvent[]>) => {
    if (cancelled) return;
    controller.enqueue([failed()]);
    controller.close();
    await upstream.cancel().catch(() => undefined);
  };
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      // A pull that passes nothing on must read on: the stream calls pull again only after an enqueue.
      for (;;) {
        const next = settledPaid ? await upstream.read() : await Promise.race([upstream.read(), refused]);
        if (next === REFUSED) return refuse(controller);
        if (cancelled) return;
        const batch = next.value ?? [];
        const end = batch.findIndex((event) => event.data === "[DONE]");
        const passing = end < 0 ? batch : batch.slice(0, end);
        for (const event of passing) meter?.push(event);
        if (passing.length > 0) controller.enqueue(passing);
        if (end < 0 && !next.done) {
          if (passing.length > 0) return;
          continue;
        }
        if (!(await paid)) return refuse(controller);
        if (cancelled) return;
        if (end >= 0) controller.enqueue(batch.slice(end));
        if (next.done) controller.close();
        return;
      }
    },
    cancel(reason) {
      cancelled = true;
      return upstream.cancel(reason);
    },
  });
}
