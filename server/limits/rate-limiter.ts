import { RATE_LIMIT_LEASE_MS, RATE_LIMIT_WINDOW_MS } from "../../config/limits";
import { withFields, type RateLimitSettings } from "../../config/rate-limits";
import type { ChatModel } from "../../config/catalog/model-catalog";
import { ApiError } from "../core/errors";
import { logEvent } from "../core/log";
import { limitHeaders, retryAfterSeconds } from "./limit-headers";
import type { LimitLog, LimitRule, LimitUse } from "./limit-log";
import { keyRule, parseKeyLimits, type KeyLimits } from "./key-limits";
import { LeaseRenewals } from "./lease-renewals";

/** How many keys' own limits a process keeps read; beyond, it starts again (each is one query to read). */
const ASKED_KEYS_KEPT = 10_000;
/** How long a key's own limits are taken as read before they are read again (an owner may lower them). */
const ASKED_FRESH_MS = 2_000;

/** Who pays for a call: a prepaid key (its id) or a paying wallet (its address, lower case). */
export type Payer = { kind: "key"; id: string } | { kind: "wallet"; address: string };

/** A call let in: the headers every answer of a limited payer carries, and how its use ends. */
export interface Admission {
  headers: Record<string, string>;
  /** The call ended: it counts `tokens` (what it was charged; its reservation when unknown) and runs no more. */
  end(tokens?: number): Promise<void>;
  /** The call was never served: it counts nothing. */
  giveBack(): Promise<void>;
}

/**
 * A call to admit: what it counts against a tokens-per-minute limit until it ends (its input and output cap), and
 * the chat model it calls, whose own limits replace the deployment's.
 */
export interface LimitedCall {
  tokens: number;
  model?: ChatModel;
}

/**
 * How fast one prepaid key or paying wallet may go: calls per minute, tokens per minute (keys) and calls at once,
 * kept in the database (LimitLog) so that every instance shares them exactly. A payer over a limit is answered 429
 * `rate_limit_exceeded` with Retry-After before any work, nothing charged; every answer of a limited payer carries
 * OpenAI's x-ratelimit-* headers. A payer whose limits are all 0 costs nothing here.
 */
export class RateLimiter {
  /**
   * The limits each key's buyer or owner set, by key id, and when they were read: an owner may lower them, so each
   * is read again once older than ASKED_FRESH_MS (a lowered limit is in force on every instance within it).
   */
  private readonly askedByKey = new Map<string, { limits: KeyLimits | undefined; readAt: number }>();
  /** The leases of this process's running calls, renewed every third of their length. */
  private readonly renewals: LeaseRenewals;

  constructor(
    private readonly log: LimitLog,
    private readonly settings: RateLimitSettings,
    private readonly keys: { limitsOf(keyId: number): Promise<string | null | undefined> },
    private readonly refused: (payer: Payer["kind"], limit: string) => void = () => {},
  ) {
    this.renewals = new LeaseRenewals(log, RATE_LIMIT_LEASE_MS / 3, RATE_LIMIT_LEASE_MS);
  }

  /** The deployment's limits for keys, tightened by what a key's buyer asked for. */
  keyRuleWith(asked: KeyLimits | undefined): LimitRule {
    return keyRule(this.settings.key, asked);
  }

  /**
   * The limits in force for a payer's call: the deployment's, or the model's own where the catalog sets them; a
   * key's lowered where its buyer asked.
   */
  private async ruleFor(payer: Payer, model: ChatModel | undefined): Promise<LimitRule> {
    const rule = withFields(this.settings[payer.kind], model?.rateLimits?.[payer.kind]);
    if (payer.kind === "wallet") return rule;
    let asked = this.askedByKey.get(payer.id);
    const now = Date.now();
    if (!asked || now - asked.readAt > ASKED_FRESH_MS) {
      if (this.askedByKey.size >= ASKED_KEYS_KEPT) this.askedByKey.clear();
      asked = { limits: parseKeyLimits(await this.keys.limitsOf(Number(payer.id))), readAt: now };
      this.askedByKey.set(payer.id, asked);
    }
    return keyRule(rule, asked.limits);
  }

  /**
   * Whose calls a call counts with: a key's (a key calls one model), a wallet's, or a wallet's calls of a model that
   * has wallet limits of its own.
   */
  private subjectOf(payer: Payer, model: ChatModel | undefined): string {
    if (payer.kind === "key") return `key:${payer.id}`;
    return model?.rateLimits?.wallet ? `wallet:${payer.address}:${model.id}` : `wallet:${payer.address}`;
  }

  async admit(payer: Payer | undefined, call: LimitedCall, now = Date.now()): Promise<Admission | undefined> {
    if (!payer) return undefined;
    const rule = await this.ruleFor(payer, call.model);
    if (rule.requestsPerMinute === 0 && rule.tokensPerMinute === 0 && rule.concurrent === 0) return undefined;
    const subject = this.subjectOf(payer, call.model);
    const leaseUntil = () => Date.now() + RATE_LIMIT_LEASE_MS;
    const taken = await this.log.take(
      subject,
      rule,
      { tokens: call.tokens, leaseUntil: leaseUntil() },
      RATE_LIMIT_WINDOW_MS,
      now,
    );
    const headers = limitHeaders(rule, taken.use);
    const { ticket } = taken;
    if (ticket === undefined) throw this.refusal(payer, rule, taken.use, call, headers);
    const release = this.renewals.hold(ticket);
    let ended: Promise<void> | undefined;
    const finish = (work: () => Promise<void>) => {
      release();
      // A database away leaves the row to stop counting as running when its lease ends.
      return (ended ??= work().catch((error: unknown) => {
        logEvent("error", "rate_limit_end_failed", { error: (error as Error).message });
      }));
    };
    return {
      headers,
      end: (tokens) => finish(() => this.log.end(ticket, tokens ?? call.tokens)),
      giveBack: () => finish(() => this.log.give(ticket)),
    };
  }

  /** The 429 of a payer over a limit: which limit, what it used, when to come back. */
  private refusal(
    payer: Payer,
    rule: LimitRule,
    use: LimitUse,
    call: LimitedCall,
    headers: Record<string, string>,
  ): ApiError {
    const who = payer.kind === "key" ? "This prepaid key" : `The wallet ${payer.address}`;
    const over: string[] = [];
    let limit = "concurrent";
    if (rule.concurrent > 0 && use.running + 1 > rule.concurrent) {
      over.push(`${rule.concurrent} calls at once (${use.running} running)`);
    }
    if (rule.tokensPerMinute > 0 && use.tokens + call.tokens > rule.tokensPerMinute) {
      limit = "tokens";
      const large =
        call.tokens > rule.tokensPerMinute
          ? `; this call alone counts ${call.tokens} (input + max_tokens): ask for fewer`
          : "";
      over.push(`${rule.tokensPerMinute} tokens per minute (${use.tokens} counted${large})`);
    }
    if (rule.requestsPerMinute > 0 && use.requests + 1 > rule.requestsPerMinute) {
      limit = "requests";
      over.push(`${rule.requestsPerMinute} requests per minute`);
    }
    this.refused(payer.kind, limit);
    const retryAfter = limit === "concurrent" ? 1 : retryAfterSeconds(use);
    return new ApiError(
      "rate_limit_exceeded",
      `Rate limit reached: ${who} may make ${over.join(" and ")}; retry in ${retryAfter} s. Nothing was charged.`,
      {
        headers: { ...headers, "Retry-After": String(retryAfter) },
      },
    );
  }
}
