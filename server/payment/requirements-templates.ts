import type { PaymentScheme } from "../core/payment-scheme";
import type { PaymentRequirements } from "@x402/core/types";
import type { BatchSettlementEvmScheme } from "@x402/evm/batch-settlement/server";

type Scheme = PaymentScheme;

/** How many amounts' requirements a route keeps built (a few hundred bytes each). */
const AMOUNTS_KEPT = 1024;

export interface RequirementTerms {
  amount: bigint;
  payTo: string;
  maxTimeoutSeconds: number;
}

/**
 * What of a scheme's `extra` follows the amount, as its server computes it (batch-settlement's `minDeposit`, the
 * scheme's own resolveMinDepositHint), for requirements with their amount.
 */
export type AmountExtra = (requirements: PaymentRequirements) => Promise<Record<string, unknown>>;

/** A channel's minimum deposit, which follows the amount: the scheme's own rule, on the requirements it starts from. */
export function channelMinDeposit(channels: BatchSettlementEvmScheme): AmountExtra {
  return async ({ extra, ...requirements }) => {
    const { minDeposit: _computed, ...base } = extra;
    return { minDeposit: await channels.resolveMinDepositHint({ ...requirements, extra: base }) };
  };
}

/**
 * One facilitator route's requirements, built by its resource server once per scheme and terms instead of at every
 * quote: requirements differ from one amount to another in `amount` (and, for a scheme with `amountExtra`, in those
 * members of `extra`) alone. Where the requirements of two amounts show that, the first is kept (frozen: every
 * quote's copy shares it) and copied with each quote's amount; where they differ otherwise, each is built.
 */
export class RequirementsTemplates {
  private readonly templates = new Map<string, Promise<PaymentRequirements | undefined>>();
  /** The templates made, by the same keys. */
  private readonly ready = new Map<string, PaymentRequirements>();
  /**
   * The requirements of each amount quoted lately, frozen, by template key and amount: quotes cluster on few amounts
   * (the minimum charge, a model's common sizes), so most get the same object, whose JSON the 402 writes once
   * (payment-required-json.ts).
   */
  private readonly byAmount = new Map<string, PaymentRequirements>();

  constructor(
    private readonly build: (scheme: Scheme, terms: RequirementTerms) => Promise<PaymentRequirements>,
    private readonly amountExtra: Partial<Record<Scheme, AmountExtra>> = {},
  ) {}

  requirements(scheme: Scheme, terms: RequirementTerms): Promise<PaymentRequirements> | PaymentRequirements {
    const key = `${scheme}\n${terms.payTo}\n${terms.maxTimeoutSeconds}`;
    // The common case, with no promise on the way: a template made, and nothing of it awaited.
    const ready = this.ready.get(key);
    if (!ready) return this.requirementsOnceReady(key, scheme, terms);
    const amountKey = `${key}\n${terms.amount}`;
    const kept = this.byAmount.get(amountKey);
    if (kept) return kept;
    if (this.amountExtra[scheme])
      return this.copy(scheme, ready, terms.amount).then((made) => this.keep(amountKey, made));
    return this.keep(amountKey, { ...ready, amount: terms.amount.toString() });
  }

  /** Keeps `requirements` (frozen) as its amount's; the oldest go once AMOUNTS_KEPT are kept. */
  private keep(amountKey: string, requirements: PaymentRequirements): PaymentRequirements {
    if (this.byAmount.size >= AMOUNTS_KEPT) this.byAmount.delete(this.byAmount.keys().next().value!);
    Object.freeze(requirements.extra);
    this.byAmount.set(amountKey, Object.freeze(requirements));
    return requirements;
  }

  private async requirementsOnceReady(key: string, scheme: Scheme, terms: RequirementTerms) {
    let template = this.templates.get(key);
    if (!template) {
      template = this.template(scheme, terms);
      this.templates.set(key, template);
      void template.then(
        (made) => made && this.ready.set(key, made),
        () => undefined,
      );
      // A failure (the facilitator's) is not kept: the next quote tries again.
      template.catch(() => this.templates.delete(key));
    }
    const made = await template;
    return made ? this.copy(scheme, made, terms.amount) : this.build(scheme, terms);
  }

  /** The template's requirements for `amount`. */
  private async copy(scheme: Scheme, template: PaymentRequirements, amount: bigint): Promise<PaymentRequirements> {
    const requirements = { ...template, amount: amount.toString() };
    const amountExtra = this.amountExtra[scheme];
    if (amountExtra) requirements.extra = { ...template.extra, ...(await amountExtra(requirements)) };
    return requirements;
  }

  private async template(scheme: Scheme, terms: RequirementTerms): Promise<PaymentRequirements | undefined> {
    const [first, second] = await Promise.all([
      this.build(scheme, terms),
      this.build(scheme, { ...terms, amount: terms.amount + 1n }),
    ]);
    Object.freeze(first.extra);
    Object.freeze(first);
    const copied = await this.copy(scheme, first, terms.amount + 1n);
    return JSON.stringify(copied) === JSON.stringify(second) && first.amount === terms.amount.toString()
      ? first
      : undefined;
  }
}
