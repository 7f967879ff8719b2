import type { PaymentPayload } from "@x402/core/types";
import type { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import { logEvent } from "../../core/log";

/** How often a held channel's reservation is renewed, as a share of its lifetime. */
const RENEW_SHARE = 3;
/** The longest a request holds its channel, whatever it does: a stream cannot outlive the upstream's own limits. */
const LONGEST_HOLD_MS = 60 * 60_000;

/**
 * Keeps the channel a voucher's request holds, as long as its answer is passed on. The scheme reserves the channel
 * for one request (its pending id) for the payment's timeout; a stream that outlives that would let a smaller voucher
 * or a refund take the channel, and its own charge then find the reservation gone. So the reservation is renewed,
 * a third of its lifetime at a time, while it is still this request's, until `stop` (the charge is taken or let go).
 */
export function holdChannel(
  scheme: BatchSettlementEvmScheme,
  payload: PaymentPayload,
  lifetimeMs: number,
): { stop(): void } {
  const context = scheme.readRequestContext(payload);
  const { channelId, pendingId } = context ?? {};
  if (!channelId || !pendingId) return { stop: () => undefined };
  const started = Date.now();
  const renew = async () => {
    if (Date.now() - started > LONGEST_HOLD_MS) return stop();
    let held = false;
    await scheme
      .getStorage()
      .updateChannel(channelId, (current) => {
        held = current?.pendingRequest?.pendingId === pendingId;
        if (!held || !current?.pendingRequest) return current;
        return { ...current, pendingRequest: { ...current.pendingRequest, expiresAt: Date.now() + lifetimeMs } };
      })
      .catch((error: unknown) => {
        // Tried again at the next turn; the reservation lasts a whole lifetime from the last renewal.
        logEvent("warn", "channel_hold_not_renewed", { channel: channelId, reason: (error as Error).message });
        held = true;
      });
    if (!held) stop();
  };
  const timer = setInterval(() => void renew(), Math.max(1000, Math.floor(lifetimeMs / RENEW_SHARE)));
  timer.unref();
  const stop = () => clearInterval(timer);
  return { stop };
}
