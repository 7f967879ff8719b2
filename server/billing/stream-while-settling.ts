import type { SettleResponse } from "@x402/core/types";
import { chatErrorEvent } from "../chat/chat-wire";
import type { EventStream, SseEvent } from "../http/event-stream";
import type { BillableCall, PreparedAnswer, X402Services } from "./payment-method";
import type { AcceptedPayment, Taking } from "./schemes/payment-scheme";
import type { StreamMeter } from "./stream-meter";

/** What a stream priced up front (`exact`), passed on while its payment is taken, works with. */
export interface SettlingPayment {
  services: X402Services;
  call: BillableCall;
  accepted: AcceptedPayment;
  upstreamMs: number;
  /** The price the payment settles. */
  amount: bigint;
  /** What a stream that passed `outputTokens` on delivered, at the quote's rates (all of it when unknown). */
  delivered(outputTokens: number | undefined): bigint;
  /** Told the settlement's time once it is in. */
  settled(settleMs: number): void;
  log(outcome: string, reason?: string, transaction?: string, settled?: bigint): void;
}

type Stream = Extract<PreparedAnswer, { kind: "stream" }>;

/**
 * An `exact` stream (the canonical chat stream) passed on from its first event while its payment settles
 * (SETTLEMENT_ORDER=overlap). Its end (`[DONE]`, or the upstream's end) waits for the settlement, so the final usage event can state the transaction and
 * no refused payment ends in a complete answer. A refused settlement ends the stream at once with chat's error event,
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
  const paid = outcome.then((taking) => taking.kind !== "refused");
  void outcome.then(async (taking) => {
    if (taking.kind === "refused") await recordUnpaid(payment, taking, meter?.result(false));
  });
  const body = passedWhileSettling(answer.stream.body, paid, meter, () =>
    chatErrorEvent(
      "settlement_failed",
      "Settlement failed: the payment was refused while the answer streamed; it was cut short",
    ),
  );
  return { body, settlement: outcome.then((taking) => (taking.kind === "taken" ? taking.settlement : undefined)) };
}

/** Takes the price; records a settlement and an unknown outcome (a refused one is recorded with what passed). */
async function settle(payment: SettlingPayment): Promise<Taking> {
  const { accepted, amount, call, services } = payment;
  const taking = await accepted.take(amount);
  payment.settled(taking.settleMs);
  if (taking.kind === "refused") return taking;
  await accepted.record(amount, taking, payment.upstreamMs);
  if (taking.kind === "unknown") {
    payment.log("settle_unknown", taking.reason, taking.transaction, amount);
    return taking;
  }
  services.metrics.settled(call.endpoint, call.quote.model, amount);
  payment.log("settled", undefined, taking.settlement.transaction, amount);
  return taking;
}

/** The settlement was refused: what the stream passed on, at the quote's rates, is what it delivered unpaid. */
async function recordUnpaid(payment: SettlingPayment, refused: Taking, outputTokens: number | undefined) {
  const unpaid = payment.delivered(outputTokens);
  await payment.accepted.record(payment.amount, refused, payment.upstreamMs, unpaid);
  payment.log("unpaid", refused.kind === "refused" ? refused.reason : undefined, undefined, unpaid);
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
