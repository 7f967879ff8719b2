import type { z } from "zod";
import type { ChatModel, ModelCatalog, ProviderApi } from "../../config/catalog/model-catalog";
import type { ChatCompletion, ChatRequestBody } from "../chat/chat-wire";
import type { EndpointDocs } from "../context/endpoint";
import type { ApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import type { KeyCarriers } from "../auth/key-principal";
import type { EventStream } from "../http/event-stream";

/**
 * A dialect is a translator at the edge: it parses its API's request into the canonical chat call, and writes the
 * canonical answer (a chat completion, or the canonical chat stream; chat/chat-wire.ts) back in its API once billing
 * has metered it, held its end until paid and stated its cost. Billing never sees a dialect's wire. One endpoint
 * factory (dialect-endpoint.ts) builds each dialect's paid endpoint; the endpoint list names each dialect once.
 */

export type { ProviderApi };

/** What every dialect's parsed request carries: the canonical call that is priced, reserved and sent. */
export interface DialectCall {
  model: ChatModel;
  /** The canonical chat request: what is priced (quoteCompletion) and sent to a chat route. */
  chatRequest: ChatRequestBody;
  /** The output cap the price is computed with. */
  maxOutputTokens: number;
  /** The caller asked for a stream. */
  stream: boolean;
  /**
   * Texts a route that speaks the dialect natively is sent that the canonical request does not carry (Messages'
   * thinking passed back): counted too, since one quote covers whichever route serves.
   */
  countedBeside?: readonly string[];
}

/**
 * One API the service answers in. The canonical stream that `encodeStream` receives is a stream of
 * `chat.completion.chunk` events that ends (when complete) with the usage-only chunk (`choices: []`, `usage` with the
 * cost appended) and `data: [DONE]`, the end released only once the call is paid; a failure is chat's error event
 * (`{"error": {message, type, param, code}}`, from the provider or from billing: `settlement_failed`,
 * `payment_expired`), after which nothing follows.
 */
export interface Dialect<Parsed extends DialectCall = DialectCall> {
  /** What a call is called in the 402's description: "<name> with <model>". */
  name: string;
  /** The first path is the dialect's own; the others are aliases. */
  paths: readonly [string, ...string[]];
  /** The request body's validation schema, documented as JSON Schema. */
  schema: z.ZodType;
  /**
   * The request as validated and translated to the canonical call; throws the dialect's 400 or 404 (ApiError).
   * `request` (absent when a call is only quoted) for the headers a native route is sent.
   */
  parse(value: unknown, catalog: ModelCatalog, request?: ApiRequest): Parsed;
  /** A whole answer: the canonical completion, its usage stating the cost, as the dialect's JSON body. */
  encodeAnswer(parsed: Parsed, completion: ChatCompletion): unknown;
  /**
   * A streamed answer: the canonical stream as the dialect's events; the last stage of the answer. Its terminal
   * event follows the canonical `[DONE]` (so it waits for the payment as that does); its error event is made from
   * the canonical error event; cancelling it cancels the canonical stream.
   */
  encodeStream(parsed: Parsed, canonical: EventStream): EventStream;
  /** How an error is answered in this API (status, headers such as PAYMENT-REQUIRED kept). */
  errorAnswer(error: ApiError): ApiAnswer;
  /** How a 402 that billing answers (x402's challenge) is worded in this API, status and headers kept; as it is if absent. */
  challengeAnswer?(answer: ApiAnswer): ApiAnswer;
  /** Where this API carries a prepaid key (auth/key-principal.ts). */
  keyCarriers: KeyCarriers;
  /** What the discovery documents and docs/api.md say of the endpoint. */
  docs(catalog: ModelCatalog): EndpointDocs;
  /** Present when providers may speak this API natively: their routes are sent the request as it came. */
  native?: NativeApi<Parsed>;
}

/**
 * A provider API a dialect passes its requests through to, on the routes that speak it (the catalog's route `api`),
 * and how the native answers become canonical ones for billing. A canonical completion or chunk may carry what it
 * was decoded from (`carryNative`), so that the dialect's encoder passes the native answer or event on unchanged,
 * patching only the usage's cost into it (into its terminal event for a stream).
 */
export interface NativeApi<Parsed extends DialectCall> {
  api: Exclude<ProviderApi, "chat">;
  /** The provider's path for it, such as "/responses" or "/messages". */
  path: string;
  /** The native request to send, its output capped at `outputCap` (what the payment or the key covers). */
  request(parsed: Parsed, outputCap: number): Record<string, unknown>;
  /**
   * The caller's headers the native route is sent beside the request (an allowlist read and checked by `parse`;
   * the route's own configured headers win over them); a chat route is never sent them.
   */
  headers?(parsed: Parsed): Readonly<Record<string, string>> | undefined;
  /** A whole native answer as the canonical completion; throws an UpstreamError for an answer that is a failure. */
  decodeAnswer(parsed: Parsed, body: Record<string, unknown>): ChatCompletion;
  /** The native stream as the canonical stream (its usage-only chunk and `[DONE]` included). */
  decodeStream(parsed: Parsed, native: EventStream): EventStream;
}

const NATIVE = Symbol("native");

/**
 * Marks a canonical completion, chunk JSON or event with the native answer or event it was decoded from. The mark
 * is a symbol-keyed property: object spreads (billing's cost) keep it, JSON never writes it.
 */
export function carryNative<T extends object>(canonical: T, native: unknown): T {
  (canonical as Record<symbol, unknown>)[NATIVE] = native;
  return canonical;
}

/** What a canonical completion, chunk JSON or event was decoded from, if it was. */
export function nativeOf(canonical: object): unknown {
  return (canonical as Record<symbol, unknown>)[NATIVE];
}
