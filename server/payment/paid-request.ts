import { encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { bazaarExtension } from "../discovery/bazaar-extension";
import { ApiError, errorObject, errorStatus } from "../errors";
import { serverTiming } from "../http/server-timing";
import { logEvent } from "../log";
import type { StartedStream } from "../upstream/openai-upstream";
import { UpstreamError } from "../upstream/upstream-error";
import { atomicToDecimal } from "../money";
import { FacilitatorUnavailableError, type PaymentGateway } from "./payment-gateway";
import type { PaymentLedger } from "./payment-ledger";
import { decodePaymentSignature, MalformedPaymentError, type DecodedPayment } from "./payment-signature";
import { describeMismatch } from "./describe-mismatch";
import { paymentRequiredJson } from "./payment-required-json";
import type { QuoteHold } from "./quote-hold";
import type { SettlementGasEstimator } from "./settlement-gas";
import { eventStreamAnswer, jsonAnswer, textAnswer, type ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";

/**
 * The result of the paid work, ready to send: it exists only once the upstream has succeeded. `onUnsettled`
 * undoes what the work wrote (a prepaid key) when the payment is not taken.
 */
export type PreparedAnswer = (
  { kind: "json"; body: unknown; status?: number } | { kind: "stream"; stream: StartedStream }
) & {
  onUnsettled?: () => void;
};

export interface PaidRequest {
  request: ApiRequest;
  /** Absolute URL of the resource, as the caller sees it; payments are bound to it. */
  resourceUrl: string;
  description: string;
  amount: bigint;
  /** Display breakdown sent as `extensions.quote`. */
  quote: Record<string, unknown>;
  bodySha256: string;
  quoteMs: number;
  /** Does the paid work for the verified payment (its nonce and payer are given for records). */
  work: (payment: { nonce: string; payer: string }) => Promise<PreparedAnswer>;
}

export interface PaymentServices {
  gateway: PaymentGateway;
  ledger: PaymentLedger;
  /** Present on networks whose quotes include live settlement gas. */
  gasEstimator?: SettlementGasEstimator;
  quoteHold?: QuoteHold<PricedRequest>;
}

export interface PricedRequest {
  amount: bigint;
  quote: Record<string, unknown>;
  requirements: PaymentRequirements;
}

/**
 * The amount, quote and requirements of a request. With live gas, the gas estimate is added and the result held
 * for the requirements' lifetime per resource and body, so the signed retry matches what was quoted.
 */
async function price(services: PaymentServices, paid: PaidRequest): Promise<PricedRequest> {
  const { gateway, gasEstimator, quoteHold } = services;
  if (!gasEstimator || !quoteHold) {
    return {
      amount: paid.amount,
      quote: paid.quote,
      requirements: await requirementsOrUnavailable(gateway, paid.amount),
    };
  }
  const lifetimeMs = gateway.paymentTimeoutSeconds * 1000;
  return quoteHold.get(`${paid.resourceUrl}\n${paid.bodySha256}`, lifetimeMs, async () => {
    let gas;
    try {
      gas = await gasEstimator.estimate();
    } catch (error) {
      logEvent("error", "gas_estimate_failed", { error: (error as Error).message });
      throw new ApiError(
        "service_unavailable",
        "The settlement gas price cannot be read right now; nothing was charged. Retry later.",
      );
    }
    const amount = paid.amount + gas.amount;
    const decimals = gateway.network.usdc.decimals;
    return {
      amount,
      quote: { ...paid.quote, ...gas.display, total_usd: atomicToDecimal(amount, decimals), amount: amount.toString() },
      requirements: await requirementsOrUnavailable(gateway, amount),
    };
  });
}

const EXPOSED_HEADERS = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Server-Timing";

/**
 * The x402 flow of one paid request: quote (402), then with a signature: match, claim the nonce, verify, do the
 * work, settle only after the work succeeded, answer. No path settles a payment for work that was not done.
 */
export async function runPaidRequest(services: PaymentServices, paid: PaidRequest): Promise<ApiAnswer> {
  const entered = performance.now();
  const { gateway, ledger } = services;
  const { amount, quote, requirements } = await price(services, paid);
  // The 402 document, built only for an answer that needs it (a paid request that succeeds does not).
  const paymentRequired = (): PaymentRequired => ({
    x402Version: 2,
    resource: { url: paid.resourceUrl, description: paid.description, mimeType: "application/json" },
    accepts: [requirements],
    extensions: { quote, ...bazaarExtension(new URL(paid.resourceUrl).pathname) },
  });

  const header = paid.request.headers.get("payment-signature");
  if (!header) {
    const total = `${atomicToDecimal(amount, gateway.network.usdc.decimals)} USD`;
    return paymentChallenge(
      paymentRequired(),
      "payment_required",
      `Payment required: ${total} in USDC on ${gateway.network.id}. Sign the requirements in the PAYMENT-REQUIRED header and repeat the request with PAYMENT-SIGNATURE.`,
    );
  }

  let payment: DecodedPayment;
  try {
    payment = decodePaymentSignature(header, gateway.network.kind);
  } catch (error) {
    if (error instanceof MalformedPaymentError)
      return paymentChallenge(paymentRequired(), "payment_invalid", error.message);
    throw error;
  }
  if (!gateway.matches(payment.payload, requirements)) {
    return paymentChallenge(
      paymentRequired(),
      "payment_mismatch",
      describeMismatch(payment.payload.accepted, requirements),
    );
  }
  const signedResource = payment.payload.resource?.url;
  if (signedResource !== undefined && signedResource !== paid.resourceUrl) {
    return paymentChallenge(
      paymentRequired(),
      "payment_mismatch",
      `Payment was made for ${signedResource}, not ${paid.resourceUrl}`,
    );
  }

  const paymentId = ledger.claim({
    nonce: payment.nonce,
    payer: payment.payer,
    amount,
    network: requirements.network,
    resource: paid.resourceUrl,
    bodyHash: paid.bodySha256,
    quoteMs: paid.quoteMs,
  });
  if (paymentId === undefined) {
    return paymentChallenge(
      paymentRequired(),
      "payment_already_used",
      "This payment signature has already been used; sign a new payment",
    );
  }

  const timings = { quote: paid.quoteMs, verify: 0, upstream: 0, settle: 0, total: 0 };
  const sinceEntry = () => paid.quoteMs + performance.now() - entered;
  let started = performance.now();
  let verification;
  try {
    verification = await gateway.verify(payment.payload, requirements);
  } catch (error) {
    ledger.update(paymentId, { status: "failed", failureReason: "facilitator_unavailable" });
    throw unavailable(error);
  }
  timings.verify = performance.now() - started;
  if (!verification.isValid) {
    const reason = verification.invalidReason ?? "invalid_payment";
    ledger.update(paymentId, { status: "failed", failureReason: reason, verifyMs: timings.verify });
    return paymentChallenge(
      paymentRequired(),
      "payment_rejected",
      `Payment rejected by the facilitator: ${reason}${verification.invalidMessage ? ` (${verification.invalidMessage})` : ""}`,
    );
  }
  ledger.update(paymentId, { status: "verified", verifyMs: timings.verify });

  started = performance.now();
  let answer: PreparedAnswer;
  try {
    answer = await paid.work({ nonce: payment.nonce, payer: payment.payer });
  } catch (error) {
    timings.upstream = performance.now() - started;
    const reason = error instanceof UpstreamError ? `upstream_${error.failure}` : "work_failed";
    ledger.update(paymentId, { status: "not_charged", failureReason: reason, upstreamMs: timings.upstream });
    logPaid(paid, payment, "not_charged", timings, reason);
    if (error instanceof UpstreamError) {
      throw new ApiError(
        "upstream_error",
        `The model provider failed (${error.message}); your payment was not settled`,
      );
    }
    throw error;
  }
  timings.upstream = performance.now() - started;

  started = performance.now();
  let settlement: SettleResponse | undefined;
  try {
    settlement = await gateway.settle(payment.payload, requirements);
  } catch (error) {
    // The facilitator may or may not have settled. The work is done: deliver it rather than risk a payer paying
    // for nothing, and leave the row for reconciliation against the chain.
    timings.settle = performance.now() - started;
    ledger.update(paymentId, {
      status: "settle_unknown",
      failureReason: (error as Error).message,
      upstreamMs: timings.upstream,
      settleMs: timings.settle,
    });
    logPaid(paid, payment, "settle_unknown", timings, (error as Error).message);
    timings.total = sinceEntry();
    return deliver(answer, undefined, timings);
  }
  timings.settle = performance.now() - started;
  if (!settlement.success) {
    const reason = settlement.errorReason ?? "settlement_failed";
    ledger.update(paymentId, {
      status: "failed",
      failureReason: reason,
      upstreamMs: timings.upstream,
      settleMs: timings.settle,
    });
    if (answer.kind === "stream") await answer.stream.cancel();
    answer.onUnsettled?.();
    logPaid(paid, payment, "settlement_failed", timings, reason);
    return paymentChallenge(
      paymentRequired(),
      "settlement_failed",
      `Settlement failed: ${reason}${settlement.errorMessage ? ` (${settlement.errorMessage})` : ""}`,
    );
  }
  const { transaction } = settlement;
  const record = () => {
    try {
      ledger.update(paymentId, {
        status: "settled",
        transaction,
        upstreamMs: timings.upstream,
        settleMs: timings.settle,
      });
    } catch (error) {
      // The transfer is on chain and the work delivered; the row stays "verified" for reconciliation.
      logEvent("error", "ledger_update_failed", { paymentId, transaction, error: (error as Error).message });
    }
    logPaid(paid, payment, "settled", timings, undefined, transaction);
  };
  timings.total = sinceEntry();
  // The payment is settled: a whole answer goes out before the ledger records it (the nonce was claimed before
  // verify, so recording later cannot let it be used twice); a stream's answer waits for the record.
  if (answer.kind === "stream") record();
  return deliver(answer, settlement, timings, answer.kind === "json" ? record : undefined);
}

async function requirementsOrUnavailable(gateway: PaymentGateway, amount: bigint): Promise<PaymentRequirements> {
  try {
    return await gateway.requirementsFor(amount);
  } catch (error) {
    throw unavailable(error);
  }
}

function unavailable(error: unknown): unknown {
  if (error instanceof FacilitatorUnavailableError) {
    return new ApiError(
      "facilitator_unavailable",
      "The payment facilitator is unavailable; nothing was charged. Retry later.",
    );
  }
  return error;
}

function paymentChallenge(
  paymentRequired: PaymentRequired,
  code:
    | "payment_required"
    | "payment_invalid"
    | "payment_mismatch"
    | "payment_already_used"
    | "payment_rejected"
    | "settlement_failed",
  message: string,
): ApiAnswer {
  // The header carries x402's document (with its `error` string when there is one); the body is the same document
  // with OpenAI's error object under `error`. The document's JSON is written once, and `error` appended to it as its
  // last member for each: this is the path of every quote.
  const documentJson = paymentRequiredJson(paymentRequired);
  const withError = (error: unknown) => `${documentJson.slice(0, -1)},"error":${JSON.stringify(error)}}`;
  const challengeJson = code === "payment_required" ? documentJson : withError(message);
  const body = withError(errorObject(code, message));
  return textAnswer(body, "application/json", {
    status: errorStatus(code),
    headers: {
      // What @x402/core's encodePaymentRequiredHeader produces (base64 of the JSON's UTF-8 bytes), through Buffer:
      // the package builds a binary string a character at a time, which was a sixth of the cost of a 402 answer.
      "PAYMENT-REQUIRED": Buffer.from(challengeJson, "utf8").toString("base64"),
      "Access-Control-Expose-Headers": EXPOSED_HEADERS,
      "Cache-Control": "no-store",
    },
  });
}

function deliver(
  answer: PreparedAnswer,
  settlement: SettleResponse | undefined,
  timings: Record<string, number>,
  afterSent?: () => void,
): ApiAnswer {
  const headers: Record<string, string> = {
    "Server-Timing": serverTiming(timings),
    "Access-Control-Expose-Headers": EXPOSED_HEADERS,
    "Cache-Control": "no-store",
  };
  if (settlement) headers["PAYMENT-RESPONSE"] = encodePaymentResponseHeader(settlement);
  if (answer.kind === "json")
    return { ...jsonAnswer(answer.body, { status: answer.status ?? 200, headers }), afterSent };
  return eventStreamAnswer(answer.stream.body, headers);
}

function logPaid(
  paid: PaidRequest,
  payment: DecodedPayment,
  outcome: string,
  timings: Record<string, number>,
  reason?: string,
  transaction?: string,
): void {
  logEvent(outcome === "settled" ? "info" : "warn", "paid_request", {
    resource: paid.resourceUrl,
    outcome,
    payer: payment.payer,
    amount: payment.payload.accepted.amount,
    reason,
    transaction,
    timings_ms: Object.fromEntries(Object.entries(timings).map(([name, value]) => [name, Number(value.toFixed(2))])),
  });
}
