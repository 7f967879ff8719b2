import type { PaymentPayload, PaymentRequirements } from "@x402/core/types";
import { declareEip2612GasSponsoringExtension, EIP2612_GAS_SPONSORING } from "@x402/extensions";
import type { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";
import type { NetworkDefinition } from "../../networks";
import type { ChainReader } from "./chain-payment";
import {
  FacilitatorCallError,
  FacilitatorRoute,
  type GatewayFacilitator,
  type RouteSettings,
} from "./facilitator-route";
import type { DecodedPayment } from "./payment-signature";
import type { Span } from "../tracing/span";
import { chainOutcome } from "./chain-outcome";
import { FacilitatorUnavailableError, type Settlement, type Verdict } from "./facilitator-answers";
import { offlineExactRequirements } from "./offline-quote";

/** The same objects for every quote: a 402 writes an extension object it has seen from its cache. */
const EIP2612_SPONSORING_DECLARATION = declareEip2612GasSponsoringExtension();
const NO_EXTENSIONS = {};

export interface PaymentGatewayConfig {
  network: NetworkDefinition;
  payTo: string;
  /** The facilitators in the order verify tries them: each over HTTP with its credentials, or any client (tests). */
  facilitators: GatewayFacilitator[];
  facilitatorTimeoutMs: number;
  /** When a facilitator that keeps failing is skipped, and for how long. */
  facilitatorBreaker?: { failureThreshold: number; cooldownMs: number };
  paymentTimeoutSeconds: number;
  /** Offer `upto` beside `exact` where the facilitator settles it for the network (EVM). */
  upto?: boolean;
  /** Offer `batch-settlement` channels with this scheme, where the facilitator lists it for the network (EVM). */
  channels?: BatchSettlementEvmScheme;
  /**
   * The chain, asked whether a payment moved before a second facilitator is asked to settle it after the first
   * failed in a way that leaves its outcome open; without it such a payment is left for reconciliation.
   */
  chain?: ChainReader;
  observe?: RouteSettings["observe"];
}

export interface SettleOptions {
  /** What an `upto` payment settles (at most the signed maximum; 0 settles nothing). */
  amount?: bigint;
  /** The facilitator that verified the payment: it settles it, unless it fails before acting. */
  verifiedBy?: string;
  /** The payment as signed: what the chain is asked about before a second facilitator settles it. */
  payment?: DecodedPayment;
  /** The call's settle phase's span, the facilitators' calls' parent, while tracing is on. */
  span?: Span;
}
type Scheme = Parameters<FacilitatorRoute["build"]>[0];
const DEFAULT_BREAKER = { failureThreshold: 3, cooldownMs: 30_000 };

/**
 * This deployment's side of x402, over the official resource server and an ordered list of facilitators: payment
 * requirements for an amount (as the first facilitator up serves them), verification at the first facilitator up
 * that serves the payment's terms, and settlement at the one that verified it, failing over to the next only when
 * the first did nothing (never reached) or the chain shows the payment unused. Each facilitator has a breaker.
 */
export class PaymentGateway {
  readonly routes: readonly FacilitatorRoute[];

  constructor(private readonly config: PaymentGatewayConfig) {
    if (config.facilitators.length === 0) throw new Error("PaymentGateway needs at least one facilitator");
    const settings: RouteSettings = {
      network: config.network,
      upto: config.upto === true,
      channels: config.channels,
      timeoutMs: config.facilitatorTimeoutMs,
      breaker: config.facilitatorBreaker ?? DEFAULT_BREAKER,
      observe: config.observe,
    };
    this.routes = config.facilitators.map((facilitator) => new FacilitatorRoute(facilitator, settings));
  }

  get network(): NetworkDefinition {
    return this.config.network;
  }

  /** The network's x402 v1 name, where the 402 offers v1 too. */
  get v1Network(): string | undefined {
    const { network } = this.config;
    return network.kind === "evm" ? network.x402V1Network : undefined;
  }

  get paymentTimeoutSeconds(): number {
    return this.config.paymentTimeoutSeconds;
  }

  /** The facilitators whose breaker lets calls through, in order. */
  private up(): FacilitatorRoute[] {
    return this.routes.filter((route) => route.breaker.state() !== "open");
  }

  /**
   * The facilitator a 402 offers the terms of: the first up that says what it supports and lists `exact` on the
   * network. A facilitator that cannot say counts as a failure of its breaker.
   */
  private async primary(): Promise<FacilitatorRoute> {
    const { network } = this.config;
    let failure: Error | undefined;
    for (const route of this.up()) {
      try {
        await route.initialize();
      } catch (error) {
        if (error instanceof FacilitatorCallError) route.failed(error);
        else route.breaker.failed();
        failure = error as Error;
        continue;
      }
      if (route.lists("exact", network.id)) return route;
    }
    throw new FacilitatorUnavailableError(
      `payment facilitator unavailable: ${failure?.message ?? `no facilitator up lists exact payments on ${network.id}`}`,
    );
  }

  private terms(amount: bigint) {
    return { amount, payTo: this.config.payTo, maxTimeoutSeconds: this.config.paymentTimeoutSeconds };
  }

  /**
   * The exact-scheme requirements for `amount` atomic units of this network's USDC, paid to our pay-to. On EVM
   * they carry the token's EIP-712 domain; on Solana the scheme adds the facilitator's fee payer.
   */
  async requirementsFor(amount: bigint): Promise<PaymentRequirements> {
    let route: FacilitatorRoute;
    try {
      route = await this.primary();
    } catch (error) {
      // No facilitator answers: EVM exact terms need none, so the quote stands and only paying waits for one.
      return (await offlineExactRequirements(this.config.network, this.terms(amount))) ?? Promise.reject(error);
    }
    return route.build("exact", this.terms(amount));
  }

  /**
   * The `upto` requirements with `amount` as the most the payer signs for, where this deployment offers `upto` and
   * the facilitator that serves the 402 lists it for the network (its `extra.facilitatorAddress`, which the payer's
   * signature names, comes from there); undefined otherwise.
   */
  async uptoRequirementsFor(
    amount: bigint,
  ): Promise<{ requirements: PaymentRequirements; extensions: Record<string, unknown> } | undefined> {
    const { network } = this.config;
    if (!this.config.upto || network.kind !== "evm") return undefined;
    const route = await this.primary().catch(() => undefined);
    if (!route?.lists("upto", network.id)) return undefined;
    // EIP-2612 gas sponsoring where the facilitator applies a payer's permit: a payer needs no gas for Permit2.
    const sponsors = (route.knownSupport?.extensions ?? []).includes(EIP2612_GAS_SPONSORING.key);
    return {
      requirements: await route.build("upto", this.terms(amount)),
      extensions: sponsors ? EIP2612_SPONSORING_DECLARATION : NO_EXTENSIONS,
    };
  }

  /**
   * The `batch-settlement` requirements with `amount` as the most one request may charge, where channels are offered
   * and the facilitator that serves the 402 lists them for the network; undefined otherwise.
   */
  async channelRequirementsFor(amount: bigint): Promise<PaymentRequirements | undefined> {
    if (!this.config.channels) return undefined;
    const route = await this.primary().catch(() => undefined);
    if (!route?.lists("batch-settlement", this.config.network.id)) return undefined;
    return route.build("batch-settlement", this.terms(amount));
  }

  /** The facilitator of that name. */
  route(name: string): FacilitatorRoute | undefined {
    return this.routes.find((route) => route.name === name);
  }

  /** True when the payload was signed for exactly these requirements (deep equality of `accepted`). */
  matches(payload: PaymentPayload, requirements: PaymentRequirements): boolean {
    return this.routes[0]!.matches(payload, requirements);
  }

  /**
   * The requirements a payment was signed for: `offered`, or the same terms as another facilitator serves them
   * (a 402 served while another facilitator was first names that one's fee payer or upto address); undefined when
   * no facilitator known serves what it signed.
   */
  async signedFor(payload: PaymentPayload, offered: PaymentRequirements): Promise<PaymentRequirements | undefined> {
    if (this.matches(payload, offered)) return offered;
    for (const route of this.routes) {
      if (!route.knownSupport || !route.lists(offered.scheme, offered.network)) continue;
      const { scheme, amount, payTo, maxTimeoutSeconds } = offered;
      const terms = { amount: BigInt(amount), payTo, maxTimeoutSeconds };
      const built = await route.build(scheme as Scheme, terms).catch(() => undefined);
      if (built && this.matches(payload, built)) return built;
    }
    return undefined;
  }

  /**
   * Whether `route` can verify and settle these terms: it lists their scheme and network (v1: under its v1 name),
   * and builds the same requirements (upto's facilitator address and Solana's fee payer are its own).
   */
  private async serves(route: FacilitatorRoute, payload: PaymentPayload, requirements: PaymentRequirements) {
    await route.initialize();
    if (payload.x402Version === 1) return route.lists(requirements.scheme, requirements.network, 1);
    if (!route.lists(requirements.scheme, requirements.network)) return false;
    const { scheme, amount, payTo, maxTimeoutSeconds } = requirements;
    const built = await route.build(scheme as Scheme, { amount: BigInt(amount), payTo, maxTimeoutSeconds });
    return route.matches({ ...payload, accepted: requirements }, built);
  }

  /** The verdict of the first facilitator up that serves the terms (a failure tries the next); `span`: the phase's. */
  async verify(payload: PaymentPayload, requirements: PaymentRequirements, span?: Span): Promise<Verdict> {
    let failure: Error | undefined;
    for (const route of this.routes) {
      if (!route.breaker.tryAcquire()) continue;
      try {
        if (!(await this.serves(route, payload, requirements))) {
          route.breaker.released();
          continue;
        }
        const verdict = await route.verify(payload, requirements, span);
        route.breaker.succeeded();
        return { ...verdict, facilitator: route.name };
      } catch (error) {
        if (!(error instanceof FacilitatorCallError)) {
          route.breaker.released();
          throw error;
        }
        route.failed(error);
        failure = error;
      }
    }
    throw new FacilitatorUnavailableError(
      `payment facilitator unavailable: ${failure?.message ?? "no facilitator up serves these payment terms"}`,
      failure instanceof FacilitatorCallError ? failure.facilitator : undefined,
    );
  }

  /**
   * Settles a payment at the facilitator that verified it (else the first that serves its terms). When that one
   * fails without acting (never reached), the next is asked; when it fails in a way that leaves its outcome open
   * (timeout, 5xx, a broken answer), the chain is asked first: a transfer found is that facilitator's settlement,
   * an unused payment goes to the next, and anything else is left unknown (FacilitatorUnavailableError) for
   * reconciliation. After such a failure, another facilitator's refusal is unknown too (the first may still land).
   */
  async settle(
    payload: PaymentPayload,
    requirements: PaymentRequirements,
    options: SettleOptions = {},
  ): Promise<Settlement> {
    const since = new Date(Date.now() - 60_000);
    const first = this.routes.find((route) => route.name === options.verifiedBy);
    const order = first ? [first, ...this.routes.filter((route) => route !== first)] : [...this.routes];
    let doubt: FacilitatorCallError | undefined;
    let failure: FacilitatorCallError | undefined;
    for (const route of order) {
      // The first is the one that verified these terms; another must be up and serve them as they were signed.
      if (route !== order[0]) {
        if (route.breaker.state() === "open") continue;
        if (!(await this.serves(route, payload, requirements).catch(() => false))) continue;
      }
      if (doubt) {
        const known = await chainOutcome(this.config.chain, doubt, requirements, options.payment, since);
        if (known) return known;
      }
      try {
        const settlement = await route.settle(payload, requirements, options.amount, options.span);
        route.breaker.succeeded();
        if (!settlement.success && doubt) {
          const reason = settlement.errorReason ?? "refused";
          throw new FacilitatorUnavailableError(
            `settlement outcome unknown: ${doubt.message}; then ${route.name} refused it (${reason})`,
            doubt.facilitator,
          );
        }
        return { ...settlement, facilitator: route.name };
      } catch (error) {
        if (!(error instanceof FacilitatorCallError)) throw error;
        route.failed(error);
        failure = error;
        if (!error.didNothing) doubt ??= error;
      }
    }
    throw new FacilitatorUnavailableError(
      `settlement outcome unknown: ${(doubt ?? failure)?.message ?? "no facilitator up settles these payment terms"}`,
      (doubt ?? failure)?.facilitator ?? options.verifiedBy,
    );
  }

  /**
   * Whether some facilitator settles x402 v1 "exact" payments on this network's v1 name (as far as they said). A
   * deployment whose facilitators do not gets no v1 payment to verify.
   */
  async acceptsV1(): Promise<boolean> {
    const name = this.v1Network;
    if (!name) return false;
    await this.primary();
    return this.routes.some((route) => route.lists("exact", name, 1));
  }
}
