import { encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, SettleResponse } from "@x402/core/types";
import { errorObject, errorStatus } from "../errors";
import { eventStreamAnswer, jsonAnswer, textAnswer, type ApiAnswer } from "../http/api-answer";
import { serverTiming } from "../http/server-timing";
import type { PreparedAnswer } from "./payment-method";
import { paymentRequiredJson } from "../payment/payment-required-json";
import type { BillableCall } from "./payment-method";
import type { PricedRequest } from "./x402-price";

const EXPOSED_HEADERS = "PAYMENT-REQUIRED, PAYMENT-RESPONSE, Server-Timing";

export type ChallengeCode =
  | "payment_required"
  | "payment_invalid"
  | "payment_mismatch"
  | "payment_already_used"
  | "payment_rejected"
  | "settlement_failed";

/** The x402 document of a priced call: what to sign, the quote's breakdown and the call's extensions. */
export function paymentRequiredDocument(call: BillableCall, priced: PricedRequest): PaymentRequired {
  return {
    x402Version: 2,
    resource: { url: call.resourceUrl, description: call.quote.description, mimeType: "application/json" },
    accepts: [priced.requirements],
    extensions: { quote: priced.quote, ...call.extensions },
  };
}

/** A 402: x402's document in PAYMENT-REQUIRED, and the same document with OpenAI's error object as the body. */
export function paymentChallenge(paymentRequired: PaymentRequired, code: ChallengeCode, message: string): ApiAnswer {
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

/** The answer of paid work, with its settlement (when known) and the phases' timings. */
export function paidAnswer(
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
