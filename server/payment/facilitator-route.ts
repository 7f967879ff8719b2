import type { FacilitatorOperation } from "../metrics/service-metrics";
import { x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import {
  SettleError,
  VerifyError,
  type Network,
  type PaymentPayload,
  type PaymentRequired,
  type PaymentRequirements,
  type ResourceInfo,
  type SettleResponse,
  type SupportedResponse,
  type VerifyResponse,
} from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import type { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import type { FacilitatorAuth } from "../../config/facilitators";
import type { NetworkDefinition } from "../../networks";
import { settleSpan, verifySpan } from "../tracing/facilitator-spans";
import type { Span } from "../tracing/span";
import { settlementOf, verdictOf } from "./facilitator-answers";
import { CircuitBreaker } from "../upstream/circuit-breaker";
import type { PaymentScheme } from "../core/payment-scheme";
import { AuthenticatedFacilitatorClient } from "./facilitator-auth";
import { channelMinDeposit, RequirementsTemplates, type RequirementTerms } from "./requirements-templates";

/** One facilitator of the gateway's list: by URL (with its credentials), or any client of one (tests). */
export interface GatewayFacilitator {
  name: string;
  url?: string;
  auth?: FacilitatorAuth;
  client?: FacilitatorClient;
}

export interface RouteSettings {
  network: NetworkDefinition;
  upto: boolean;
  /** The deployment's batch-settlement scheme, where it offers channels: one instance for every route. */
  channels?: BatchSettlementEvmScheme;
  timeoutMs: number;
  breaker: { failureThreshold: number; cooldownMs: number };
  /** Told of every call: which facilitator, which operation, whether it answered, how long it took. */
  observe?: (facilitator: string, operation: FacilitatorOperation, outcome: "ok" | "failed", seconds: number) => void;
}

/**
 * A call that got no answer to rely on. `unreached`: the request never reached the facilitator (connection refused,
 * name not found), so it did nothing; otherwise it may have acted (timeout, 5xx, a broken answer).
 */
export class FacilitatorCallError extends Error {
  constructor(
    readonly facilitator: string,
    readonly unreached: boolean,
    readonly status: number | undefined,
    cause: unknown,
  ) {
    super(`${facilitator}: ${(cause as Error).message ?? String(cause)}`, { cause });
    this.name = "FacilitatorCallError";
  }

  /**
   * 429: the facilitator is up and refused to do anything with this call (too many requests). It says nothing of
   * its health, so its breaker does not count it, and like an unreached call it leaves the payment untouched.
   */
  get rateLimited(): boolean {
    return this.status === 429;
  }

  /**
   * A 4xx but a refused credential (401, 403, 407) or a rate limit: the facilitator is up and judged the payment it
   * was sent, which says nothing of its health: a caller's junk cannot open the breaker every other payer needs.
   */
  get payloadRefused(): boolean {
    const status = this.status;
    return status !== undefined && status >= 400 && status < 500 && ![401, 403, 407, 429].includes(status);
  }

  /** The facilitator did nothing with the call: another may be asked without doubt. */
  get didNothing(): boolean {
    return this.unreached || this.rateLimited;
  }
}

const UNREACHED_CODES = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Whether an error of fetch says the request could not be sent at all. */
function unreached(error: unknown): boolean {
  for (
    let current = error as { code?: string; cause?: unknown } | undefined, depth = 0;
    current && depth < 8;
    depth++
  ) {
    if (current.code && UNREACHED_CODES.has(current.code)) return true;
    current = current.cause as typeof current;
  }
  return false;
}

/** The HTTP status a failed facilitator call answered with, where it answered. */
export function statusOf(error: unknown): number | undefined {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth++) {
    if (current instanceof VerifyError || current instanceof SettleError) return current.statusCode;
    const match = /failed \((\d{3})\)/.exec(current.message);
    if (match) return Number(match[1]);
    current = current.cause;
  }
  return undefined;
}

/**
 * One facilitator as the gateway uses it: its client (with its credentials), an x402 resource server of its own
 * (the requirements it builds name what it supports: upto's facilitatorAddress, Solana's fee payer), what it
 * listed in /supported, and a circuit breaker. Failures come out as FacilitatorCallError; verdicts as answers.
 */
export class FacilitatorRoute {
  readonly name: string;
  readonly url: string | undefined;
  readonly breaker: CircuitBreaker;
  private readonly client: FacilitatorClient;
  private readonly server: x402ResourceServer;
  private initialized: Promise<SupportedResponse> | undefined;
  private supported: SupportedResponse | undefined;
  /** The requirements it serves, built once per scheme and terms where only the amount changes. */
  private readonly templates: RequirementsTemplates;

  constructor(
    facilitator: GatewayFacilitator,
    private readonly settings: RouteSettings,
  ) {
    this.name = facilitator.name;
    this.url = facilitator.url;
    this.breaker = new CircuitBreaker(settings.breaker);
    const http =
      facilitator.client ??
      new AuthenticatedFacilitatorClient(
        { url: facilitator.url!, timeoutMs: settings.timeoutMs },
        facilitator.auth ?? { kind: "none" },
      );
    this.client = {
      verify: (payload, requirements) => this.timed("verify", () => http.verify(payload, requirements)),
      settle: (payload, requirements) => this.timed("settle", () => http.settle(payload, requirements)),
      // The resource server asks it when it initializes: what it listed is kept for the gateway's questions.
      getSupported: () =>
        this.timed("supported", () => http.getSupported()).then((supported) => (this.supported = supported)),
    };
    const { network } = settings;
    const scheme = network.kind === "evm" ? new ExactEvmScheme() : new ExactSvmScheme();
    this.server = new x402ResourceServer(this.client).register(network.id, scheme);
    // v1 payments name the network by its v1 name; the resource server looks their scheme up by it.
    if (network.kind === "evm" && network.x402V1Network) this.server.register(network.x402V1Network as Network, scheme);
    if (settings.upto && network.kind === "evm") this.server.register(network.id, new UptoEvmScheme());
    if (settings.channels && network.kind === "evm") this.server.register(network.id, settings.channels);
    const { channels } = settings;
    this.templates = new RequirementsTemplates((scheme, terms) => this.built(scheme, terms), {
      "batch-settlement": channels && channelMinDeposit(channels),
    });
  }

  private async timed<T>(operation: FacilitatorOperation, call: () => Promise<T>): Promise<T> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    try {
      const result = await call();
      this.settings.observe?.(this.name, operation, "ok", seconds());
      return result;
    } catch (error) {
      // A verdict given with an error status (a refused payment) is an answer; anything else is a failure.
      const status = statusOf(error);
      const verdict = (error instanceof VerifyError || error instanceof SettleError) && status! < 500;
      this.settings.observe?.(this.name, operation, verdict ? "ok" : "failed", seconds());
      throw error;
    }
  }

  /**
   * A call that failed, told to the breaker: a failure of the facilitator's own counts towards opening it, but a rate
   * limit (429) or a payment it refused without a verdict's shape (a 4xx) only frees the trial. A verdict
   * (`isValid: false`, a refused settlement) is no failure at all: it is returned, not thrown.
   */
  failed(error: FacilitatorCallError): void {
    if (error.rateLimited || error.payloadRefused) this.breaker.released();
    else this.breaker.failed();
  }

  /** What it supports, asked once (its resource server learns it too); a failure is retried by the next caller. */
  initialize(): Promise<SupportedResponse> {
    this.initialized ??= this.server.initialize().then(
      () => this.supported!,
      (error: unknown) => {
        this.initialized = undefined;
        throw new FacilitatorCallError(this.name, unreached(error), statusOf(error), error);
      },
    );
    return this.initialized;
  }

  /** Its client, with its credentials, timed and observed as each of the gateway's calls is. */
  get facilitator(): FacilitatorClient {
    return this.client;
  }

  /** What it listed, once known. */
  get knownSupport(): SupportedResponse | undefined {
    return this.supported;
  }

  /** Whether it listed `scheme` (x402 v2, or `version`) on `network`. */
  lists(scheme: string, network: string, version = 2): boolean {
    return (this.supported?.kinds ?? []).some(
      (kind) => kind.x402Version === version && kind.scheme === scheme && kind.network === network,
    );
  }

  /** The requirements this facilitator would serve for `amount` of the asset under `scheme` (initialized first). */
  async build(scheme: PaymentScheme, terms: RequirementTerms): Promise<PaymentRequirements> {
    await this.initialize();
    return await this.templates.requirements(scheme, terms);
  }

  /** The requirements as the resource server builds them (initialized). */
  private async built(scheme: PaymentScheme, terms: RequirementTerms) {
    const { network } = this.settings;
    const [requirements] = await this.server.buildPaymentRequirements({
      scheme,
      network: network.id,
      payTo: terms.payTo,
      maxTimeoutSeconds: terms.maxTimeoutSeconds,
      price: {
        amount: terms.amount.toString(),
        asset: network.usdc.address,
        extra: network.kind === "evm" ? { ...network.usdc.eip712 } : {},
      },
    });
    if (!requirements) throw new Error("x402 resource server built no payment requirements");
    return requirements;
  }

  /** True when the payload was signed for exactly these requirements (deep equality of `accepted`). */
  matches(payload: PaymentPayload, requirements: PaymentRequirements): boolean {
    return this.server.findMatchingRequirements([requirements], payload) !== undefined;
  }

  /** The verdict; one sent with an error status below 500 is a verdict too, not a failure. */
  verify(payload: PaymentPayload, requirements: PaymentRequirements, parent?: Span): Promise<VerifyResponse> {
    return verifySpan(parent, this.name, payload, requirements, () =>
      this.server.verifyPayment(payload, requirements).catch((error: unknown) => {
        if (error instanceof VerifyError && error.statusCode < 500) return verdictOf(error);
        throw new FacilitatorCallError(this.name, unreached(error), statusOf(error), error);
      }),
    );
  }

  /** Settles: `exact` its amount; `upto` the `amount` given. A refusal is an answer, a failure is thrown. */
  settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    amount?: bigint,
    parent?: Span,
  ): Promise<SettleResponse> {
    const overrides = amount === undefined ? undefined : { amount: amount.toString() };
    return settleSpan(parent, this.name, payload, requirements, amount, async () => {
      await this.initialize();
      return this.server.settlePayment(payload, requirements, undefined, undefined, overrides).catch((error) => {
        if (error instanceof SettleError && error.statusCode < 500) return settlementOf(error);
        throw new FacilitatorCallError(this.name, unreached(error), statusOf(error), error);
      });
    });
  }

  /**
   * The x402 document of a refused payment, as its scheme completes it: a channel whose voucher did not match the
   * running total gets the channel's state, which the official client resyncs from (the "corrective 402").
   */
  paymentRequired(
    accepts: PaymentRequirements[],
    resource: ResourceInfo,
    error: string,
    payload: PaymentPayload,
  ): Promise<PaymentRequired> {
    return this.server.createPaymentRequiredResponse(accepts, resource, error, undefined, undefined, payload);
  }

  /** A verified payment whose work failed: what its scheme holds for it (a channel's reservation) is let go. */
  async cancel(payload: PaymentPayload, requirements: PaymentRequirements, reason: "handler_threw" | "handler_failed") {
    await this.server.createPaymentCancellationDispatcher(payload, requirements).cancel({ reason });
  }

  /** A fresh /supported, for health and the capability check; failures come out as FacilitatorCallError. */
  async probe(): Promise<SupportedResponse> {
    try {
      return await this.client.getSupported();
    } catch (error) {
      throw new FacilitatorCallError(this.name, unreached(error), statusOf(error), error);
    }
  }
}
