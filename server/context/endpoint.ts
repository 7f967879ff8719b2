import type { z } from "zod";
import type { NetworkDefinition } from "../../networks";
import type { AppContext } from "./app-context";
import type { Grant, PreparedAnswer } from "../billing/payment-method";
import type { Quote } from "../pricing/quote";
import type { ApiError } from "../core/errors";
import type { ApiAnswer } from "../http/api-answer";
import type { ApiRequest } from "../http/api-request";
import type { KeyCarriers } from "../auth/key-principal";

/** How an endpoint is paid for: not at all, per request with x402, or with a prepaid key as bearer. */
export type Access = "free" | "x402" | "prepaid";

/** What the discovery documents, the guides and docs/api.md say of an endpoint. */
export interface EndpointDocs {
  operationId: string;
  summary: string;
  responseDescription: string;
  successStatus?: 200 | 201;
  /** A valid request body. */
  example?: Record<string, unknown>;
  /** How the price is computed, in words (paid endpoints). */
  pricing?: string;
  streaming?: boolean;
  /** A request body is optional (defaults apply). */
  bodyOptional?: boolean;
  /** False for the documents that describe the others: the catalog (OpenAPI, manifest, llms.txt) leaves them out. */
  listed?: boolean;
  /** Extra error answers worth naming in OpenAPI, by status. */
  errors?: Record<number, string>;
}

interface EndpointBase {
  method: "GET" | "POST";
  /** The first path is the endpoint's own; the others are aliases. */
  paths: readonly [string, ...string[]];
  /** The request body's validation schema, documented as JSON Schema. */
  schema?: z.ZodType;
  docs: EndpointDocs;
}

/** An endpoint answered by its handler alone: free ones, and the prepaid key's status (its bearer is the key). */
export interface FreeEndpoint<Uses extends keyof AppContext = keyof AppContext> extends EndpointBase {
  kind: "free";
  /** Free, or paid for by a prepaid key that the handler itself checks (its status). */
  access: readonly ("free" | "prepaid")[];
  /** What of the app's context the handler reaches: it is given those alone, bound when its route is composed. */
  uses: readonly Uses[];
  // A property, not a method: its context is checked strictly, so a handler that reaches more than `uses` names
  // does not compile.
  handle: (context: Pick<AppContext, NoInfer<Uses>>, request: ApiRequest) => Promise<ApiAnswer> | ApiAnswer;
}

/** What the paid work reaches: the providers, the configuration (the catalog, the origin), the prepaid keys. */
export type WorkContext = Pick<AppContext, "config" | "providers" | "prepaidKeys" | "ownedKeys" | "limits">;

/** A paid endpoint: parse, quote, then the work the billing wrapper runs once the payment is authorized. */
export interface PaidEndpoint<Parsed = unknown> extends EndpointBase {
  kind: "paid";
  method: "POST";
  access: readonly ("x402" | "prepaid")[];
  body?: { maxBytes?: number; optional?: boolean };
  /**
   * The request as validated; throws the endpoint's 400. `request` is the call's (its headers), absent when the
   * call is only quoted.
   */
  parse(value: unknown, request?: ApiRequest): Parsed;
  /**
   * The price; throws (or rejects with) what the endpoint refuses once priced (an input over the context limit). A
   * promise where pricing takes long enough to yield to other requests (a long input counted); else the quote itself.
   */
  quote(parsed: Parsed, network: NetworkDefinition): Quote | Promise<Quote>;
  /** The work, run once the payment is authorized; `request` for what depends on it (the origin the caller used). */
  work(context: WorkContext, parsed: Parsed, grant: Grant, request: ApiRequest): Promise<PreparedAnswer>;
  /**
   * The work is an upstream call, and nothing else: with SETTLEMENT_ORDER=overlap it starts while the facilitator
   * verifies the payment (aborted by `grant.signal` when the payment is refused). Work that writes state (a key
   * bought) waits for the verdict.
   */
  overlapsVerify?: boolean;
  /** The work calls a provider: each request holds one of its caller's places there (limits/provider-share.ts). */
  callsProvider?: boolean;
  /** An x402 `batch-settlement` channel may pay for it (answers, not a key purchase), where channels are offered. */
  channels?: boolean;
  /**
   * A prepaid key (or x402 `upto`) may pay for the tokens used: the work's answer is then the canonical chat wire
   * (a chat completion, or its stream; chat/chat-wire.ts), whose usage billing reads, whatever API the caller speaks
   * (the answer's `encode` writes that API; dialects/dialect.ts).
   */
  billedInTokens?: boolean;
  /** Where the request carries a prepaid key, if it does (default: `Authorization: Bearer`; auth/key-principal.ts). */
  keyCarriers?: KeyCarriers;
  /** How the endpoint's API answers an error (default: OpenAI's error object, errors.ts). */
  errorAnswer?(error: ApiError): ApiAnswer;
  /**
   * How the endpoint's API words the 402 billing answers with (x402's challenge, whose body is the payment document
   * with OpenAI's error object); its status and headers (PAYMENT-REQUIRED) are to be kept. Default: as it is.
   */
  challengeAnswer?(answer: ApiAnswer): ApiAnswer;
}

// Methods, not function-typed fields: an endpoint of any parsed type is a PaidEndpoint<unknown> in the list.
export type Endpoint = FreeEndpoint | PaidEndpoint;

/** Declares a paid endpoint, keeping its parsed type between parse, quote and work. */
export function paidEndpoint<Parsed>(definition: Omit<PaidEndpoint<Parsed>, "kind">): PaidEndpoint<Parsed> {
  return { kind: "paid", ...definition };
}

export function freeEndpoint<Uses extends keyof AppContext>(
  definition: Omit<FreeEndpoint<Uses>, "kind">,
): FreeEndpoint<Uses> {
  return { kind: "free", ...definition };
}
