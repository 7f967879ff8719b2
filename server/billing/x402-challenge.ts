import { encodePaymentResponseHeader } from "@x402/core/http";
import type { PaymentRequired, PaymentRequirements, SettleResponse } from "@x402/core/types";
import { errorObject } from "../core/errors";
import { eventStreamAnswer, jsonAnswer, PROVIDER_HEADER, type ApiAnswer } from "../http/api-answer";
import { serverTiming } from "../http/server-timing";
import { withUsageCost, x402Cost } from "./answer-cost";
import { withStreamUsageCost } from "./stream-usage-cost";
import { base64Json, documentParts, extensionMembers, headJsonOf } from "../payment/payment-required-json";
import { v1Requirements } from "../payment/x402-v1";
import type { BillableCall, PreparedAnswer } from "./payment-method";
import type { ChallengePart, Problem } from "./payment-methods";
import type { PricedRequest } from "./schemes/payment-scheme";
import type { CallTrace } from "../tracing/call-trace";

/** What a priced call's payment is for, as both x402 versions describe it. */
export function resourceInfo(call: BillableCall): { url: string; description: string; mimeType: string } {
  return { url: call.resourceUrl, description: call.quote.description, mimeType: "application/json" };
}

/**
 * The x402 document of a priced call: what to sign, the quote's breakdown, the payment-identifier declaration and
 * the call's extensions. Every 402 is this document, whatever it refuses.
 */
export function paymentRequiredDocument(
  call: BillableCall,
  priced: PricedRequest,
  paymentIdentifier: object,
): PaymentRequired {
  // In the order the schemes are listed (payment-schemes.ts), which the offers keep.
  const offers = Object.values(priced.offers);
  return {
    x402Version: 2,
    resource: resourceInfo(call),
    accepts: offers.map((offer) => offer.requirements),
    extensions: {
      quote: priced.quote,
      "payment-identifier": paymentIdentifier,
      ...call.extensions,
      ...Object.assign({}, ...offers.map((offer) => offer.extensions)),
    },
  };
}

/**
 * x402's part of a 402: its v2 document in PAYMENT-REQUIRED, and a JSON body of the same terms with OpenAI's error
 * object; on a network with an x402 v1 name (`v1Network`) the body's terms are the v1 document, which v1 clients
 * read from it. The body's extensions are the quote's breakdown alone: the protocol's other extensions (the
 * endpoint's `bazaar` schema, `payment-identifier`, a scheme's declarations; two thirds of a document) are for x402
 * v2 clients, which read the header, so the body does not carry them a second time.
 */
export function x402ChallengePart(
  paymentRequired: PaymentRequired,
  { code, message }: Problem,
  v1Network?: string,
): ChallengePart {
  // This is the path of every quote: the extensions' JSON is written once for both documents, the shared members
  // (every extension but the quote) once for every quote of a path (payment-required-json.ts), and `error` is
  // appended to a document as its last member.
  const { extensions, ...head } = paymentRequired;
  const members = extensions && extensionMembers(extensions);
  const withError = (error: unknown, { head, tail }: { head: string; tail: string }) =>
    `${tail ? head : head.slice(0, -1)}${tail.slice(0, -1)},"error":${JSON.stringify(error)}}`;
  // What @x402/core's encodePaymentRequiredHeader produces (base64 of the JSON's UTF-8 bytes), through Buffer (the
  // package builds a binary string a character at a time), the shared members' part encoded once (base64Json).
  const headJson = headJsonOf(head);
  const document = documentParts(headJson, members);
  const header =
    code === "payment_required"
      ? base64Json(document)
      : Buffer.from(withError(message, document), "utf8").toString("base64");
  const quoteOnly = members && { own: members.own, shared: undefined };
  const body = v1Network ? v1DocumentParts(paymentRequired, v1Network, quoteOnly) : documentParts(headJson, quoteOnly);
  return { headers: { "PAYMENT-REQUIRED": header }, body: withError(errorObject(code, message), body) };
}

/** x402 v1's document of the same terms, for v1 clients, which read the body; with the extensions given. */
function v1DocumentParts(
  paymentRequired: PaymentRequired,
  v1Network: string,
  members: ReturnType<typeof extensionMembers> | undefined,
): ReturnType<typeof documentParts> {
  // x402 v1 has only `exact`.
  const accepts = paymentRequired.accepts
    .filter((accepted) => accepted.scheme === "exact")
    .map((accepted) => v1Form(accepted, v1Network, paymentRequired.resource));
  return documentParts({ x402Version: 1, accepts }, members);
}

/** Each frozen `exact` entry's v1 form, for the resource it was last written for (its JSON then written once). */
const v1Forms = new WeakMap<object, { key: string; form: ReturnType<typeof v1Requirements> }>();

/** v1Requirements, the same object again (frozen) for the same frozen entry and resource. */
function v1Form(accepted: PaymentRequirements, v1Network: string, resource: PaymentRequired["resource"]) {
  if (!Object.isFrozen(accepted)) return v1Requirements(accepted, v1Network, resource);
  const key = `${v1Network}\n${resource.url}\n${resource.description}\n${resource.mimeType}`;
  const kept = v1Forms.get(accepted);
  if (kept?.key === key) return kept.form;
  const form = Object.freeze(v1Requirements(accepted, v1Network, resource));
  v1Forms.set(accepted, { key, form });
  return form;
}

/** The headers that state a settlement to an x402 client: PAYMENT-RESPONSE, and X-PAYMENT-RESPONSE for v1's. */
export function x402Receipt(settled: SettleResponse, version: 1 | 2 = 2): Record<string, string> {
  const encoded = encodePaymentResponseHeader(settled);
  return version === 1
    ? { "PAYMENT-RESPONSE": encoded, "X-PAYMENT-RESPONSE": encoded }
    : { "PAYMENT-RESPONSE": encoded };
}

/**
 * The answer of paid work, with its settlement (when known; a stream passed on while it settles states its
 * transaction in its final usage event once it is in) in the headers `receipt` writes (x402's unless told), what it
 * cost and the phases' timings.
 */
export function paidAnswer(
  answer: PreparedAnswer,
  settlement: SettleResponse | Promise<SettleResponse | undefined> | undefined,
  timings: Record<string, number>,
  {
    afterSent,
    trace,
    receipt = x402Receipt,
  }: { afterSent?: () => void; trace?: CallTrace; receipt?: (settled: SettleResponse) => Record<string, string> } = {},
): ApiAnswer {
  const settling = settlement instanceof Promise ? settlement : undefined;
  const settled = settling ? undefined : (settlement as SettleResponse | undefined);
  const headers: Record<string, string> = {
    "Server-Timing": serverTiming(timings),
    "Cache-Control": "no-store",
  };
  if (settled) Object.assign(headers, receipt(settled));
  if (answer.provider) headers[PROVIDER_HEADER] = answer.provider;
  // The cost is the price, known before settling (so a stream's headers have it too); the transaction only once
  // settled. A stream states it in its final usage event, when the caller asked for one.
  const { price } = answer;
  const cost = price && x402Cost(price, settled?.transaction, trace);
  if (cost) Object.assign(headers, cost.headers);
  // The caller's API is written last, once the cost is stated (payment-method.ts's AnswerEncoder).
  const { encode } = answer;
  if (answer.kind === "json") {
    const body = cost ? withUsageCost(answer.body, cost.usage, trace) : answer.body;
    return { ...jsonAnswer(encode ? encode.json(body) : body, { status: answer.status ?? 200, headers }), afterSent };
  }
  const usage =
    cost && (settling ? async () => x402Cost(price, (await settling)?.transaction).usage : () => cost.usage);
  const stream = usage ? withStreamUsageCost(answer.stream.body, usage, trace) : answer.stream.body;
  return eventStreamAnswer(encode ? encode.stream(stream) : stream, headers);
}
