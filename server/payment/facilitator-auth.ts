import { generateJwt } from "@coinbase/cdp-sdk/auth";
import { FacilitatorResponseError, FacilitatorTimeoutError, type FacilitatorClient } from "@x402/core/server";
import {
  SettleError,
  VerifyError,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from "@x402/core/types";
import { Agent, request } from "undici";
import { z } from "zod";
import type { FacilitatorAuth } from "../../config/facilitators";
import { facilitatorCallSpan } from "../tracing/facilitator-spans";
import { withTraceHeaders } from "../tracing/tracing";
import type { Span } from "../tracing/span";

type Operation = "verify" | "settle" | "supported";

/** How each facilitator operation is asked: what a CDP JWT's `uris` claim names. */
const METHODS: Record<Operation, "GET" | "POST"> = { verify: "POST", settle: "POST", supported: "GET" };

// undici's request follows no redirect (a 3xx is an answer like any other): the credentials go to this host only.
const agent = new Agent({ keepAliveTimeout: 30_000 });

const optional = z
  .string()
  .nullish()
  .transform((value) => value ?? undefined);
const record = z
  .record(z.string(), z.unknown())
  .nullish()
  .transform((value) => value ?? undefined);
const verifySchema = z.looseObject({ isValid: z.boolean(), invalidReason: optional, invalidMessage: optional });
const settleSchema = z.looseObject({
  success: z.boolean(),
  errorReason: optional,
  errorMessage: optional,
  payer: optional,
  transaction: z.string(),
  network: z.string(),
  amount: optional,
  extensions: record,
  extra: record,
});
const supportedSchema = z.looseObject({
  kinds: z.array(z.looseObject({ x402Version: z.number(), scheme: z.string(), network: z.string() })),
  extensions: z.array(z.string()).default([]),
  signers: z.record(z.string(), z.array(z.string())).default({}),
});

function excerpt(text: string): string {
  const compact = text.trim().replace(/\s+/g, " ");
  return compact === "" ? "<empty response>" : compact.length <= 200 ? compact : `${compact.slice(0, 197)}...`;
}

/**
 * An x402 facilitator over HTTP (POST /verify, POST /settle, GET /supported), sending its credentials with every
 * request: nothing; a fixed header; or, for CDP, a JWT signed with the API key by the CDP SDK (valid 120 s, naming
 * the request's method, host and path), made anew for each request. It answers and fails as `@x402/core`'s
 * HTTPFacilitatorClient does (VerifyError / SettleError for a verdict sent with an error status, "failed (NNN)"
 * otherwise), with one difference: that client follows redirects, re-sending a fixed header to wherever a 3xx
 * points; here a 3xx is a failure, and nothing is sent anywhere but the facilitator's own URL.
 */
export class AuthenticatedFacilitatorClient implements FacilitatorClient {
  private readonly url: string;
  private readonly host: string;
  private readonly basePath: string;
  private readonly timeoutMs: number;

  constructor(
    config: { url: string; timeoutMs?: number },
    private readonly auth: FacilitatorAuth,
  ) {
    this.url = config.url.replace(/\/+$/, "");
    const { host, pathname } = new URL(this.url);
    this.host = host;
    this.basePath = pathname.replace(/\/+$/, "");
    this.timeoutMs = config.timeoutMs ?? 30_000;
  }

  /** The headers of one operation's request: its credentials, the content type and the trace context of `span`. */
  async headers(operation: Operation, span?: Span): Promise<Record<string, string>> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    const { auth } = this;
    if (auth.kind === "header") headers[auth.name] = auth.value;
    if (auth.kind === "cdp") {
      const token = await generateJwt({
        apiKeyId: auth.apiKeyId,
        apiKeySecret: auth.apiKeySecret,
        requestMethod: METHODS[operation],
        requestHost: this.host,
        requestPath: `${this.basePath}/${operation}`,
      });
      headers.authorization = `Bearer ${token}`;
    }
    return withTraceHeaders(headers, span);
  }

  /** One request: its status and body text, within the time allowed; a redirect is refused, not followed. */
  private async call(operation: Operation, body?: unknown, span?: Span): Promise<{ status: number; text: string }> {
    const signal = AbortSignal.timeout(this.timeoutMs);
    try {
      const answer = await request(`${this.url}/${operation}`, {
        method: METHODS[operation],
        headers: await this.headers(operation, span),
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
        dispatcher: agent,
      });
      const text = await answer.body.text();
      if (answer.statusCode >= 300 && answer.statusCode < 400) {
        throw new Error(
          `Facilitator ${operation} failed (${answer.statusCode}): redirects are not followed (credentials stay with their host)`,
        );
      }
      return { status: answer.statusCode, text };
    } catch (error) {
      if (signal.aborted) throw new FacilitatorTimeoutError(operation, this.timeoutMs);
      throw error;
    }
  }

  private parse<T>(operation: Operation, text: string, schema: z.ZodType<T>): T {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid JSON: ${excerpt(text)}`);
    }
    const parsed = schema.safeParse(data);
    if (!parsed.success) {
      throw new FacilitatorResponseError(`Facilitator ${operation} returned invalid data: ${excerpt(text)}`);
    }
    return parsed.data;
  }

  /** A failed status: a verdict (`isValid` / `success` in its body) is the error type the resource server reads. */
  private failure(operation: "verify" | "settle", status: number, text: string): Error {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      return new Error(`Facilitator ${operation} failed (${status}): ${excerpt(text)}`);
    }
    if (typeof data === "object" && data !== null) {
      if (operation === "verify" && "isValid" in data) return new VerifyError(status, data as VerifyResponse);
      if (operation === "settle" && "success" in data) return new SettleError(status, data as SettleResponse);
    }
    return new Error(`Facilitator ${operation} failed (${status}): ${excerpt(JSON.stringify(data))}`);
  }

  private async post(operation: "verify" | "settle", payload: PaymentPayload, requirements: PaymentRequirements) {
    const body = { x402Version: payload.x402Version, paymentPayload: payload, paymentRequirements: requirements };
    const { status, text } = await this.call(operation, body, facilitatorCallSpan(payload));
    if (status < 200 || status > 299) throw this.failure(operation, status, text);
    return text;
  }

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    const text = await this.post("verify", payload, requirements);
    return this.parse("verify", text, verifySchema) as VerifyResponse;
  }

  async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
    const text = await this.post("settle", payload, requirements);
    return this.parse("settle", text, settleSchema) as SettleResponse;
  }

  /** What it supports; a 429 is asked again after its Retry-After (at most 3 tries, as the official client). */
  async getSupported(): Promise<SupportedResponse> {
    for (let attempt = 0; ; attempt++) {
      const { status, text } = await this.call("supported");
      if (status >= 200 && status <= 299) return this.parse("supported", text, supportedSchema) as SupportedResponse;
      if (status !== 429 || attempt >= 2) {
        throw new Error(`Facilitator getSupported failed (${status}): ${excerpt(text)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 1000 * 2 ** attempt));
    }
  }
}
