import { chatErrorEvent } from "../chat/chat-wire";
import { STREAM_USAGE_GRACE_MS, UPTO_MIN_VALIDITY_MS, UPTO_SETTLE_MARGIN_MS } from "../../config/limits";
import type { EventStream, SseEvent } from "../http/event-stream";
import { x402Cost, type AnswerCost } from "./answer-cost";
import { meteredStream } from "./metered-stream";
import type { BillableCall, X402Price, X402Services } from "./payment-method";
import type { AcceptedPayment } from "./schemes/payment-scheme";
import { withStreamUsageCost } from "./stream-usage-cost";

/** What a stream charged what it used works with: its accepted payment, and how its session charges. */
export interface UsageStreamPayment {
  services: X402Services;
  call: BillableCall;
  accepted: AcceptedPayment;
  upstreamMs: number;
  /**
   * What the call costs for the output tokens it used (the most it may cost when they are unknown), and the input
   * tokens the provider reported.
   */
  charge(outputTokens: number | undefined, reportedInput?: number): bigint;
  /** What an answer says an amount is. */
  price(amount: bigint): X402Price;
  log(outcome: string, reason?: string, transaction?: string, settled?: bigint): void;
}

/** Why an `upto` payment cannot be taken, when its deadline leaves no time to answer and settle before it. */
export function uptoDeadlineProblem(deadline: number | undefined, now = Date.now()): string | undefined {
  if (deadline === undefined || deadline * 1000 >= now + UPTO_MIN_VALIDITY_MS) return undefined;
  const left = Math.max(0, Math.floor(deadline - now / 1000));
  return `This upto payment's deadline is ${left} s away; it is settled once the answer's usage is known, so sign it valid for at least ${UPTO_MIN_VALIDITY_MS / 1000} s (the requirements' maxTimeoutSeconds)`;
}

/**
 * A stream charged what it used (`upto`, a channel's voucher), its payment taken on its usage as it passes: when
 * its usage event arrives (before that event, the last ones and `[DONE]` are sent, so the event states the cost and
 * the transaction), or when it ends: the output the meter counted (stream-meter.ts: the usage reported; without it,
 * the cap for a stream the upstream completed, the text passed on for one cut short), nothing when it passed no
 * output. A caller who leaves is charged what the upstream reports within the grace that follows. A payment with a
 * deadline (upto's Permit2 deadline) is taken before it: a stream still running at its margin is cut. The outcome
 * is the ledger's and the metrics': one unknown is recorded with its amount (`settle_unknown`), one refused as a debt
 * (`unpaid`, the amount it came to); the stream is delivered either way.
 */
export function settledOnUsage(body: EventStream, payment: UsageStreamPayment): EventStream {
  const usage = payment.call.usage!;
  let settled: Promise<AnswerCost | undefined> | undefined;
  const meter = usage.streamMeter(payment.call.quote.tokens!.maxOutput);
  const settle = (outputTokens: number) => (settled ??= settleUsage(payment, outputTokens, meter.reportedInput));
  const { deadline } = payment.accepted;
  // At the deadline's margin, a stream not settled yet is settled at once for what was passed on (as one cut short),
  // whether or not its caller is still reading, and cut.
  const cut =
    deadline === undefined
      ? body
      : cutBefore(body, deadline * 1000 - UPTO_SETTLE_MARGIN_MS, () => {
          if (settled) return false;
          const output = meter.result(false);
          settled = output === undefined ? settleNothing(payment) : settleUsage(payment, output, meter.reportedInput);
          return true;
        });
  const metered = meteredStream(cut, meter, {
    charge: async (outputTokens) => void (await settle(outputTokens)),
    release: async () => void (await (settled ??= settleNothing(payment))),
    graceMs: STREAM_USAGE_GRACE_MS,
  });
  const statedCost = async (reported: Record<string, unknown>) => {
    const outputTokens = usage.fromJson({ usage: reported });
    if (outputTokens === undefined) return undefined;
    const input = usage.inputFromJson({ usage: reported });
    return (await (settled ??= settleUsage(payment, outputTokens, input)))?.usage;
  };
  const costed = withStreamUsageCost(metered, statedCost, payment.call.request.trace);
  if (deadline === undefined) return costed;
  return endedOnCut(costed, () =>
    chatErrorEvent(
      "payment_expired",
      "The answer was cut short: the upto payment's deadline came before it ended; what was passed on is settled",
    ),
  );
}

/** The error a stream cut before its payment's deadline fails with, until endedOnCut turns it into an event. */
class DeadlineCut extends Error {}

/** The longest wait setTimeout holds (about 24.8 days); a deadline further away sets no timer. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

/**
 * Passes `source` on until the time `at` (ms since the epoch). Then, if `cut()` says so (the payment was not settled
 * yet; it settles it), the source is cancelled at once, whoever is reading, and the stream fails with DeadlineCut at
 * its next read.
 */
function cutBefore(source: EventStream, at: number, cut: () => boolean): EventStream {
  const reader = source.getReader();
  let expired = false;
  const wait = at - Date.now();
  const timer =
    wait > LONGEST_TIMER_MS
      ? undefined
      : setTimeout(
          () => {
            if (!cut()) return;
            expired = true;
            // A read under way ends now; the upstream is abandoned.
            reader.cancel().catch(() => undefined);
          },
          Math.max(0, wait),
        );
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      let next;
      try {
        next = await reader.read();
      } catch (error) {
        clearTimeout(timer);
        throw error;
      }
      if (expired) throw new DeadlineCut();
      if (!next.done) return controller.enqueue(next.value);
      clearTimeout(timer);
      controller.close();
    },
    cancel(reason) {
      clearTimeout(timer);
      return reader.cancel(reason);
    },
  });
}

/** Ends with `failed()`'s event, instead of failing, a stream cut before its payment's deadline. */
function endedOnCut(source: EventStream, failed: () => SseEvent): EventStream {
  const reader = source.getReader();
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      try {
        const next = await reader.read();
        if (next.done) controller.close();
        else controller.enqueue(next.value);
      } catch (error) {
        if (!(error instanceof DeadlineCut)) throw error;
        controller.enqueue([failed()]);
        controller.close();
      }
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** Takes the usage's charge: what the answer cost, with the transaction once known; undefined when refused. */
async function settleUsage(
  payment: UsageStreamPayment,
  outputTokens: number,
  reportedInput: number | undefined,
): Promise<AnswerCost | undefined> {
  const { accepted, call, services } = payment;
  const amount = payment.charge(outputTokens, reportedInput);
  const taking = await accepted.take(amount);
  if (taking.kind === "refused") {
    // Delivered and refused: a debt on record (`unpaid`, the amount it came to), and its payer is served
    // settled-first from now on. The event states no cost: none was paid.
    await accepted.record(amount, taking, payment.upstreamMs, amount);
    payment.log("unpaid", taking.reason, undefined, amount);
    return undefined;
  }
  await accepted.record(amount, taking, payment.upstreamMs);
  if (taking.kind === "taken") {
    services.metrics.settled(call.endpoint, call.quote.model, amount);
    payment.log("settled", undefined, taking.settlement.transaction, amount);
    return x402Cost(payment.price(amount), taking.settlement.transaction, call.request.trace);
  }
  payment.log("settle_unknown", taking.reason, taking.transaction, amount);
  // A transfer that may still land states its cost.
  return x402Cost(payment.price(amount), undefined, call.request.trace);
}

/** A stream that passed no output: nothing is taken. */
async function settleNothing(payment: UsageStreamPayment): Promise<undefined> {
  await payment.accepted.release("no_output", payment.upstreamMs);
  payment.log("not_charged", "no_output");
  return undefined;
}
