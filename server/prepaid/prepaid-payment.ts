import { STREAM_USAGE_GRACE_MS } from "../../config/limits";
import type { ChatModel } from "../../config/catalog/model-catalog";
import type { PreparedAnswer } from "../billing/payment-method";
import { phase } from "../billing/phase";
import type { Span } from "../tracing/span";
import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import { eventStreamAnswer, jsonAnswer, PROVIDER_HEADER } from "../http/api-answer";
import { serverTiming } from "../http/server-timing";
import { unknownPrepaidKey } from "./prepaid-code";
import type { PrepaidKeyStore, Reservation } from "./prepaid-key-store";
import { prepaidTokensCost } from "../pricing/prepaid-token-cost";
import { chargedInput } from "../pricing/used-tokens-charge";
import { UpstreamError } from "../upstream/upstream-error";
import { prepaidCost, withUsageCost, type AnswerCost } from "../billing/answer-cost";
import { meteredStream } from "../billing/metered-stream";
import { withStreamUsageCost } from "../billing/stream-usage-cost";
import type { ServiceMetrics } from "../metrics/service-metrics";
import type { DeferredWrites } from "../lifecycle/deferred-writes";
import type { Authorization, BillableCall, CallAuthorizer, Finished } from "../billing/payment-method";
import type { PaymentMethod } from "../billing/payment-methods";
import { keyPrincipal } from "../auth/key-principal";
import type { KeyPrincipal } from "../auth/principal";

/** What a prepaid key's calls work with: the keys, a reservation's lease, the metrics, the deferred writes. */
export interface PrepaidServices {
  prepaidKeys: PrepaidKeyStore;
  reservationTtlMs: number;
  metrics: ServiceMetrics;
  writes: DeferredWrites;
}

/**
 * Prepaid keys as a payment method: the key principal a request presents where its endpoint takes one (where its API
 * carries it: auth/key-principal.ts), whose code a limit's early admission knows its payer by. It offers nothing in
 * a 402: a key is bought with a payment.
 */
export function prepaidKeyMethod(services: PrepaidServices): PaymentMethod<KeyPrincipal> {
  return {
    name: "prepaid",
    credential: (endpoint, request) =>
      endpoint.access.includes("prepaid") ? keyPrincipal(request, endpoint.keyCarriers) : undefined,
    admissionKey: (key) => key.code,
    authorize: (call, key) => {
      const { prepaidKeys, reservationTtlMs, metrics, writes } = services;
      return new PrepaidPayment(prepaidKeys, key.code, reservationTtlMs, metrics, writes).authorize(call);
    },
  };
}

/**
 * A call billed to a prepaid key instead of paid with x402: reserve, let the work use the output cap the
 * reservation covers, then charge the input as counted plus the output as reported (never more than reserved) and
 * release the rest. A call that fails before any output releases everything; a stream is metered as it passes
 * (see metered-stream.ts). Each answer says what its tokens cost at the key's price and what the key has left.
 */
export class PrepaidPayment implements CallAuthorizer {
  constructor(
    private readonly store: PrepaidKeyStore,
    private readonly code: string,
    private readonly reservationTtlMs: number,
    private readonly metrics: ServiceMetrics,
    /** Where a charge waits while the database is away: the answer is out, the tokens are charged when it is back. */
    private readonly writes: DeferredWrites,
  ) {}

  async authorize(call: BillableCall): Promise<Authorization> {
    const { tokens } = call.quote;
    const { usage } = call;
    if (!tokens || !usage) throw new Error("a prepaid key can pay only for calls billed in tokens");
    const { store, code, metrics, writes } = this;
    // The usual case is one statement; only a refused reservation looks the key up to say why.
    const wanted = { inputTokens: tokens.input, maxOutputTokens: tokens.maxOutput };
    const timings = { reserve: 0, upstream: 0, settle: 0 };
    const reserving = async (span: Span | undefined) => {
      const reserved = await store.reserve(code, tokens.model.id, wanted, this.reservationTtlMs);
      span?.setAttribute("paysvc.prepaid.reserved", reserved !== undefined);
      return reserved;
    };
    const attributes = { "paysvc.model": tokens.model.id };
    const parent = call.request.trace?.span;
    const reservation = await phase(timings, "reserve", reserving, { parent, attributes });
    if (!reservation) throw await this.refusal(tokens.model, tokens.input);
    const model = tokens.model.id;
    metrics.prepaid("reserved", model, tokens.input + reservation.allowedOutput);
    // Settled once, by whichever comes first: a stream's usage event (whose answer states the charge) or its end.
    // The settlement answers what the key has left after it, in the same round trip.
    // `remaining` is unknown while the database is away: the charge then waits for it (deferred-writes.ts).
    let settled: Promise<{ charged: number; remaining: number | undefined }> | undefined;
    const lease = this.renewWhileRunning(reservation);
    /** Ends the reservation, charging `charged` of it (0 releases it whole). */
    const end = async (charged: number) => {
      lease.stop();
      const ended = { keyId: reservation.keyId, reservation: reservation.id, tokens: charged };
      const remaining = await writes.write("prepaid_charge", ended, () => store.settle(reservation, charged));
      return { charged, remaining };
    };
    /**
     * Charges the input plus the output, never more than reserved: the input as counted, or as the provider reported
     * it where that is more (chargedInput).
     */
    let chargedSoFar: number | undefined;
    const charge = (outputTokens: number, reportedInput: number | undefined) =>
      (settled ??= (async () => {
        metrics.inputCounted(model, tokens.input, reportedInput);
        const input = chargedInput(tokens.input, reportedInput);
        const output = Math.min(outputTokens, reservation.allowedOutput);
        const charged = Math.min(input + output, tokens.input + reservation.allowedOutput);
        chargedSoFar = charged;
        metrics.prepaid("charged", model, charged);
        return end(charged);
      })());
    const release = async () => {
      chargedSoFar ??= 0;
      await (settled ??= end(0));
    };
    /** What the tokens charged are worth at the key's price, and what the key has left once they are charged. */
    const costOf = ({ charged, remaining }: { charged: number; remaining: number | undefined }): AnswerCost => {
      const amount = prepaidTokensCost(tokens.model, charged, tokens.decimals);
      const cost = { amount, decimals: tokens.decimals, chargedTokens: charged, remainingTokens: remaining };
      return prepaidCost(cost, call.request.trace);
    };

    const finish = async (answer: PreparedAnswer): Promise<Finished> => {
      const headers = this.headers(reservation, tokens.maxOutput);
      if (answer.provider) headers[PROVIDER_HEADER] = answer.provider;
      if (answer.kind === "json") {
        // Charged before the answer goes out, not after (which would save the caller about 0.1 ms): a caller that
        // asks for its balance right after, from any process over this database, must see the charge.
        // Without a reported count the whole reservation is charged: the upstream may have produced all of it.
        const settlement = await phase(
          timings,
          "settle",
          () => charge(usage.fromJson(answer.body) ?? reservation.allowedOutput, usage.inputFromJson(answer.body)),
          { parent },
        );
        const cost = costOf(settlement);
        Object.assign(headers, cost.headers);
        headers["Server-Timing"] = serverTiming(timings);
        const body = withUsageCost(answer.body, cost.usage, call.request.trace);
        const whole = jsonAnswer(answer.encode ? answer.encode.json(body) : body, {
          status: answer.status ?? 200,
          headers,
        });
        const chargedTokens = () => settlement.charged;
        return { answer: whole, outcome: "prepaid", payment: "prepaid", timings, chargedTokens };
      }
      headers["Server-Timing"] = serverTiming(timings);
      const meter = usage.streamMeter(reservation.allowedOutput);
      const metered = meteredStream(answer.stream.body, meter, {
        charge: async (outputTokens) => void (await charge(outputTokens, meter.reportedInput)),
        release,
        graceMs: STREAM_USAGE_GRACE_MS,
      });
      // The usage event is charged as it passes, so that it can state the charge and the balance after it; the
      // stream's end then charges nothing more.
      const charged = async (reported: Record<string, unknown>) => {
        const outputTokens = usage.fromJson({ usage: reported });
        if (outputTokens === undefined) return undefined;
        return costOf(await charge(outputTokens, usage.inputFromJson({ usage: reported }))).usage;
      };
      const stated = withStreamUsageCost(metered, charged, call.request.trace);
      // A stream is charged after its answer starts (at its usage event or its end): no settle time for the metrics.
      const { reserve, upstream } = timings;
      const streamed = eventStreamAnswer(answer.encode ? answer.encode.stream(stated) : stated, headers);
      const chargedTokens = () => chargedSoFar;
      return {
        answer: streamed,
        outcome: "prepaid",
        payment: "prepaid",
        timings: { reserve, upstream },
        chargedTokens,
      };
    };
    const failed = async (error: unknown): Promise<never> => {
      await release();
      if (!(error instanceof UpstreamError)) throw error;
      throw new ApiError("upstream_error", `The model provider failed (${error.message}); no tokens were charged`);
    };
    const grant = {
      outputCap: reservation.allowedOutput,
      payer: { kind: "key" as const, id: String(reservation.keyId) },
    };
    return { kind: "granted", session: { grant, timings, failed, finish } };
  }

  private headers(reservation: Reservation, maxOutputTokens: number): Record<string, string> {
    const headers: Record<string, string> = {
      "Cache-Control": "no-store",
      "X-Prepaid-Max-Tokens": String(reservation.allowedOutput),
    };
    if (reservation.allowedOutput < maxOutputTokens) {
      headers["X-Prepaid-Max-Tokens-Lowered-From"] = String(maxOutputTokens);
    }
    return headers;
  }

  /**
   * Renews the reservation's lease every third of it while the call runs, whole or streamed, until it is charged or
   * released: a live call keeps its budget however long it takes, and a process that dies stops renewing, so its
   * reservations stop counting within one lease.
   */
  private renewWhileRunning(reservation: Reservation): { stop(): void } {
    const renew = () =>
      this.store.extend(reservation, this.reservationTtlMs).catch((error: unknown) => {
        logEvent("error", "prepaid_extend_failed", { error: (error as Error).message });
      });
    const timer = setInterval(renew, Math.max(1000, Math.floor(this.reservationTtlMs / 3)));
    return { stop: () => clearInterval(timer) };
  }

  /**
   * Why the code could not reserve: no such key (401), a key for another model (400), a disabled key, or too few
   * tokens left.
   */
  private async refusal(model: ChatModel, inputTokens: number): Promise<ApiError> {
    const key = await this.store.findByCode(this.code);
    if (!key) return unknownPrepaidKey();
    if (key.model !== model.id) {
      return new ApiError(
        "invalid_request",
        `This prepaid key is for ${key.model}; it cannot be used with ${model.id}`,
        { param: "model" },
      );
    }
    if (key.status === "disabled") {
      return new ApiError(
        "insufficient_quota",
        "This prepaid key is disabled: its token budget is used up. Buy a new pack.",
      );
    }
    return new ApiError(
      "insufficient_quota",
      `This prepaid key has too few tokens left for this request (${inputTokens} input tokens plus at least 1 output token); buy a new pack`,
    );
  }
}
