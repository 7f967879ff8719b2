import type { EventStream, SseEvent } from "../http/event-stream";
import { ShutdownCut } from "../lifecycle/drain";
import { logEvent } from "../core/log";
import type { StreamMeter } from "./stream-meter";

export interface StreamBudget {
  /** Charges the output tokens the stream used. */
  charge(outputTokens: number): Promise<void>;
  /** Charges nothing. */
  release(): Promise<void>;
  /** How long the upstream is read for its usage after the client left. */
  graceMs: number;
}

/**
 * Passes a stream's events on while the meter reads each. When it ends the key is
 * charged what the meter says, exactly once. A client that leaves once output has begun is answered no more, but
 * the upstream is read for up to `graceMs` more for its usage report.
 */
export function meteredStream(source: EventStream, meter: StreamMeter, budget: StreamBudget): EventStream {
  const upstream = source.getReader();
  let upstreamDone = false;
  let clientLeft = false;
  let finished = false;
  /** Meters the events of a read; returns them, to pass on. */
  const consume = (done: boolean, batch: SseEvent[] | undefined): SseEvent[] => {
    upstreamDone ||= done;
    if (!batch) return [];
    for (const event of batch) meter.push(event);
    return batch;
  };
  /** Charges once; the stream ends after the charge is written, so a balance asked for next includes it. */
  const finish = async () => {
    if (finished) return;
    finished = true;
    // Completed only when the upstream ended the stream, whoever was still reading it by then.
    const output = meter.result(upstreamDone);
    await runOrLog("prepaid_settle_failed", () => (output === undefined ? budget.release() : budget.charge(output)));
  };
  /** Reads on after the client left, until the usage is reported, the stream ends, or the grace runs out. */
  const readForUsage = async () => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const expired = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), budget.graceMs);
    });
    try {
      while (!meter.usageReported && !upstreamDone) {
        const next = await Promise.race([upstream.read(), expired]);
        if (!next) return;
        consume(next.done, next.value);
      }
    } catch {
      // The upstream failed meanwhile: what was read stands.
    } finally {
      clearTimeout(timer);
    }
  };
  return new ReadableStream<SseEvent[]>({
    async pull(controller) {
      try {
        // A pull that passes nothing on (an empty batch) must read on: the stream calls pull again only after an
        // enqueue, and a reader waiting for this one would wait forever.
        for (;;) {
          const { done, value } = await upstream.read();
          const shown = consume(done, value);
          // The client left while this read waited: the cancel reads on and settles.
          if (clientLeft) return;
          if (shown.length > 0) controller.enqueue(shown);
          if (done) {
            await finish();
            controller.close();
            return;
          }
          if (shown.length > 0) return;
        }
      } catch (error) {
        if (clientLeft) return;
        await finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      clientLeft = true;
      // A stream cut by the shutdown is billed what it passed on: nobody waits for the rest.
      if (meter.hasOutput && !(reason instanceof ShutdownCut)) await readForUsage();
      await finish();
      await upstream.cancel(reason);
    },
  });
}

/**
 * Runs a charge, release or extend that can no longer change the answer: a failure is logged, never thrown (the
 * answer is out; a reservation left unsettled stops counting when it expires, and the call is then not charged).
 */
async function runOrLog(event: string, run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    logEvent("error", event, { error: (error as Error).message });
  }
}
