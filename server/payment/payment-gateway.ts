import { HTTPFacilitatorClient, x402ResourceServer, type FacilitatorClient } from "@x402/core/server";
import {
  SettleError,
  VerifyError,
  type Network,
  type PaymentPayload,
  type PaymentRequirements,
  type SettleResponse,
  type VerifyResponse,
} from "@x402/core/types";
import { ExactEvmScheme } from "@x402/evm/exact/server";
import { declareEip2612GasSponsoringExtension, EIP2612_GAS_SPONSORING } from "@x402/extensions";
import { UptoEvmScheme } from "@x402/evm/upto/server";
import { ExactSvmScheme } from "@x402/svm/exact/server";
import type { NetworkDefinition } from "../../networks";

export interface PaymentGatewayConfig {
  network: NetworkDefinition;
  payTo: string;
  /** The facilitator over HTTP; or, with `facilitator`, any client of one (tests use their own). */
  facilitatorUrl: string;
  facilitatorTimeoutMs: number;
  facilitator?: FacilitatorClient;
  paymentTimeoutSeconds: number;
  /** Offer `upto` beside `exact` where the facilitator settles it for the network (EVM). */
  upto?: boolean;
}

/** What offering `upto` adds to a 402: the extensions the facilitator applies for it. */
interface UptoSupport {
  extensions: Record<string, unknown>;
}

/** The facilitator could not be asked (down, timed out, answered garbage): no verdict on the payment. */
export class FacilitatorUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FacilitatorUnavailableError";
  }
}

/**
 * This deployment's side of x402, over the official resource server: payment requirements for an amount, and
 * verification and settlement through the facilitator over HTTP.
 */
export class PaymentGateway {
  private readonly facilitator: FacilitatorClient;
  private readonly server: x402ResourceServer;
  private initialized: Promise<void> | undefined;
  private v1Support: Promise<boolean> | undefined;
  private uptoSupport: Promise<UptoSupport | undefined> | undefined;

  constructor(private readonly config: PaymentGatewayConfig) {
    this.facilitator =
      config.facilitator ??
      new HTTPFacilitatorClient({ url: config.facilitatorUrl, timeoutMs: config.facilitatorTimeoutMs });
    const scheme = config.network.kind === "evm" ? new ExactEvmScheme() : new ExactSvmScheme();
    this.server = new x402ResourceServer(this.facilitator).register(config.network.id, scheme);
    // v1 payments name the network by its v1 name; the resource server looks their scheme up by it.
    const { network } = config;
    if (network.kind === "evm" && network.x402V1Network) {
      this.server.register(network.x402V1Network as Network, scheme);
    }
    if (config.upto && network.kind === "evm") this.server.register(network.id, new UptoEvmScheme());
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

  /** Learns what the facilitator supports, once; a failure is retried by the next caller. */
  private ensureInitialized(): Promise<void> {
    this.initialized ??= this.server.initialize().catch((error: unknown) => {
      this.initialized = undefined;
      throw new FacilitatorUnavailableError(`payment facilitator unavailable: ${(error as Error).message}`);
    });
    return this.initialized;
  }

  /**
   * The exact-scheme requirements for `amount` atomic units of this network's USDC, paid to our pay-to. On EVM
   * they carry the token's EIP-712 domain; on Solana the scheme adds the facilitator's fee payer.
   */
  async requirementsFor(amount: bigint): Promise<PaymentRequirements> {
    return this.build("exact", amount);
  }

  /**
   * The `upto` requirements with `amount` as the most the payer signs for, where this deployment offers `upto` and
   * the facilitator lists it for the network (its `extra.facilitatorAddress`, which the payer's signature names, comes
   * from there); undefined otherwise.
   */
  async uptoRequirementsFor(
    amount: bigint,
  ): Promise<{ requirements: PaymentRequirements; extensions: Record<string, unknown> } | undefined> {
    const support = await this.settlesUpto();
    if (!support) return undefined;
    return { requirements: await this.build("upto", amount), extensions: support.extensions };
  }

  private async build(scheme: "exact" | "upto", amount: bigint): Promise<PaymentRequirements> {
    await this.ensureInitialized();
    const { network } = this.config;
    const [requirements] = await this.server.buildPaymentRequirements({
      scheme,
      network: network.id,
      payTo: this.config.payTo,
      maxTimeoutSeconds: this.config.paymentTimeoutSeconds,
      price: {
        amount: amount.toString(),
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

  async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
    try {
      return await this.server.verifyPayment(payload, requirements);
    } catch (error) {
      // A facilitator that rejects with a non-2xx status still gives a verdict.
      if (error instanceof VerifyError) {
        return {
          isValid: false,
          invalidReason: error.invalidReason,
          invalidMessage: error.invalidMessage,
          payer: error.payer,
        };
      }
      throw new FacilitatorUnavailableError(`payment facilitator unavailable: ${(error as Error).message}`);
    }
  }

  /** Settles a payment: `exact` its amount; `upto` the `amount` given (at most the signed maximum, 0 for nothing). */
  async settle(payload: PaymentPayload, requirements: PaymentRequirements, amount?: bigint): Promise<SettleResponse> {
    // A reconciler may settle before anything else asked the facilitator what it supports.
    await this.ensureInitialized();
    const overrides = amount === undefined ? undefined : { amount: amount.toString() };
    try {
      return await this.server.settlePayment(payload, requirements, undefined, undefined, overrides);
    } catch (error) {
      if (error instanceof SettleError) {
        return {
          success: false,
          errorReason: error.errorReason,
          errorMessage: error.errorMessage,
          payer: error.payer,
          transaction: error.transaction,
          network: error.network,
        };
      }
      throw new FacilitatorUnavailableError(`settlement outcome unknown: ${(error as Error).message}`);
    }
  }

  /**
   * Whether the facilitator settles x402 v1 "exact" payments on this network's v1 name (asked once; a failure to
   * ask is retried next time). A facilitator that does not gets no v1 payment to verify.
   */
  acceptsV1(): Promise<boolean> {
    const { network } = this.config;
    if (network.kind !== "evm" || !network.x402V1Network) return Promise.resolve(false);
    const name = network.x402V1Network;
    this.v1Support ??= this.facilitator.getSupported().then(
      (supported) =>
        supported.kinds.some((kind) => kind.x402Version === 1 && kind.scheme === "exact" && kind.network === name),
      (error: unknown) => {
        this.v1Support = undefined;
        throw new FacilitatorUnavailableError(`payment facilitator unavailable: ${(error as Error).message}`);
      },
    );
    return this.v1Support;
  }

  /**
   * Whether this deployment offers `upto` and the facilitator settles it on this network, and the extensions a 402
   * offering it declares: EIP-2612 gas sponsoring where the facilitator applies a payer's permit, so a payer
   * needs no gas to let Permit2 move its USDC (asked once; a failure to ask is retried next time).
   */
  private settlesUpto(): Promise<UptoSupport | undefined> {
    const { network } = this.config;
    if (!this.config.upto || network.kind !== "evm") return Promise.resolve(undefined);
    this.uptoSupport ??= this.facilitator.getSupported().then(
      (supported) => {
        const settles = supported.kinds.some(
          (kind) => kind.x402Version === 2 && kind.scheme === "upto" && kind.network === network.id,
        );
        if (!settles) return undefined;
        const sponsors = (supported.extensions ?? []).includes(EIP2612_GAS_SPONSORING.key);
        return { extensions: sponsors ? declareEip2612GasSponsoringExtension() : {} };
      },
      (error: unknown) => {
        this.uptoSupport = undefined;
        throw new FacilitatorUnavailableError(`payment facilitator unavailable: ${(error as Error).message}`);
      },
    );
    return this.uptoSupport;
  }

  /** Health probe: the facilitator answers /supported and supports this network's exact scheme. */
  async probe(): Promise<void> {
    const supported = await this.facilitator.getSupported();
    const kind = supported.kinds.find((entry) => entry.network === this.config.network.id && entry.scheme === "exact");
    if (!kind) throw new Error(`facilitator does not support exact payments on ${this.config.network.id}`);
  }
}
