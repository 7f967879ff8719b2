import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

/**
 * What a request came to. Paid endpoints: `quoted` (the first 402 with the price), `paid` (settled), `prepaid`
 * (billed to a prepaid key), `settle_unknown` (delivered, the settlement's outcome left to reconciliation),
 * `replayed` (a retry under a payment-identifier given the answer kept from its first request, not charged again),
 * `refused` (a payment or key refused, a limit reached), `invalid` (a bad request), `upstream_failed`, `error`.
 * Free endpoints: `served`, or one of the failures.
 */
export type RequestOutcome =
  | "quoted"
  | "paid"
  | "prepaid"
  | "settle_unknown"
  | "replayed"
  | "served"
  | "refused"
  | "invalid"
  | "upstream_failed"
  | "error";

/** A call to a facilitator, by what it asks (the `operation` label). */
export type FacilitatorOperation = "supported" | "verify" | "settle";

/** The way a call was paid for, the `payment` label (core/payment-method-name.ts). */
export type PaymentKind = PaymentMethodName;
import type { PaymentMethodName } from "../core/payment-method-name";

/** How often the event loop's delay is sampled; prom-client's default, 10 ms, wakes an idle server 100 times a second. */
const EVENT_LOOP_SAMPLE_MS = 100;
/** Seconds, from half a millisecond (a quote) to two minutes (the upstream's time limit). */
const PHASE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/**
 * A metric's child for a set of label values, looked up once and kept: prom-client otherwise hashes a labels object
 * on every call, several times per request. Values in the order of the metric's label names.
 */
function childrenOf<Child>(metric: { labels(...values: string[]): Child }): (...values: string[]) => Child {
  const made = new Map<string, Child>();
  return (...values) => {
    const key = values.join("\u0000");
    let child = made.get(key);
    if (child === undefined) made.set(key, (child = metric.labels(...values)));
    return child;
  };
}

/**
 * The process's metrics, in a registry of its own (served by GET /metrics). Labels are the endpoint's own path,
 * models of the catalog, outcomes, phases and operations: bounded sets; never a payer, a key or a resource URL.
 */
export class ServiceMetrics {
  readonly registry = new Registry();
  private readonly requests;
  private readonly revenue;
  private readonly unpaid;
  private readonly phases;
  private readonly prepaidTokens;
  private readonly freeTierRefusals;
  private readonly inputCountDifferences;
  private readonly inputCountDifferenceTokens;
  private readonly rateLimitRefusals;
  private readonly facilitatorErrors;
  private readonly upstreamErrors;
  private readonly reconciled;
  private readonly providerCalls;
  private readonly providerLatency;
  private readonly facilitatorCalls;
  private readonly facilitatorLatency;
  private readonly requestsOf;
  private readonly phaseOf;
  private readonly prepaidTokensOf;
  private readonly providerCallsOf;
  private readonly providerLatencyOf;
  private readonly facilitatorCallsOf;
  private readonly facilitatorLatencyOf;

  constructor(network: string) {
    const registers = [this.registry];
    this.registry.setDefaultLabels({ network });
    // Ten samples a second describe the loop's delay between two scrapes as well as a hundred.
    collectDefaultMetrics({ register: this.registry, eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS });
    this.requests = new Counter({
      name: "paysvc_requests_total",
      help: "Requests by endpoint (its own path, aliases included) and outcome",
      labelNames: ["endpoint", "outcome"] as const,
      registers,
    });
    this.revenue = new Counter({
      name: "paysvc_revenue_atomic_total",
      help: "Settled x402 payments in the asset's atomic units (USDC: 6 decimals), by endpoint and model",
      labelNames: ["endpoint", "model"] as const,
      registers,
    });
    this.unpaid = new Counter({
      name: "paysvc_unpaid_atomic_total",
      help: "Streams delivered while their x402 payment settled, whose settlement was refused: what they delivered at the quote's rates, in atomic units, by endpoint and model",
      labelNames: ["endpoint", "model"] as const,
      registers,
    });
    this.phases = new Histogram({
      name: "paysvc_request_phase_seconds",
      help: "Phases of paid requests: x402 quote, verify, upstream, settle and total; prepaid reserve, upstream, settle",
      labelNames: ["payment", "phase"] as const,
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.prepaidTokens = new Counter({
      name: "paysvc_prepaid_tokens_total",
      help: "Prepaid-key tokens reserved for calls and charged to keys, by model",
      labelNames: ["model", "kind"] as const,
      registers,
    });
    this.inputCountDifferences = new Counter({
      name: "paysvc_input_count_differences_total",
      help: "Calls whose provider reported another input token count than the quote counted, by model and direction (over: the provider counted more)",
      labelNames: ["model", "direction"] as const,
      registers,
    });
    this.inputCountDifferenceTokens = new Counter({
      name: "paysvc_input_count_difference_tokens_total",
      help: "Input tokens by which providers' counts differed from the quotes', by model and direction",
      labelNames: ["model", "direction"] as const,
      registers,
    });
    this.freeTierRefusals = new Counter({
      name: "paysvc_free_tier_refusals_total",
      help: "Free chat requests refused because the caller's window was full",
      registers,
    });
    this.rateLimitRefusals = new Counter({
      name: "paysvc_rate_limit_refusals_total",
      help: "Calls refused 429 because their payer was over a rate limit, by payer (key, wallet; address: unpaid quotes) and limit (requests, tokens, concurrent)",
      labelNames: ["payer", "limit"] as const,
      registers,
    });
    this.facilitatorErrors = new Counter({
      name: "paysvc_facilitator_errors_total",
      help: "Facilitator calls that failed or timed out, by operation",
      labelNames: ["operation"] as const,
      registers,
    });
    this.upstreamErrors = new Counter({
      name: "paysvc_upstream_errors_total",
      help: "Requests answered 502 because the model provider failed, by endpoint",
      labelNames: ["endpoint"] as const,
      registers,
    });
    this.reconciled = new Counter({
      name: "paysvc_reconciled_rows_total",
      help: "Ledger rows the background reconciliation read, by what it found (mismatch: the chain disagrees)",
      labelNames: ["outcome"] as const,
      registers,
    });
    this.providerCalls = new Counter({
      name: "paysvc_provider_requests_total",
      help: "Calls to model providers (routes of the catalog), by provider and outcome (failed: the next route was tried, or the caller got an error)",
      labelNames: ["provider", "outcome"] as const,
      registers,
    });
    this.providerLatency = new Histogram({
      name: "paysvc_provider_latency_seconds",
      help: "Time a provider took to answer (streams: to the first event), by provider",
      labelNames: ["provider"] as const,
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.facilitatorCalls = new Counter({
      name: "paysvc_facilitator_requests_total",
      help: "Calls to each facilitator, by facilitator, operation and outcome (failed: no answer, or a 5xx; the next facilitator may have been asked)",
      labelNames: ["facilitator", "operation", "outcome"] as const,
      registers,
    });
    this.facilitatorLatency = new Histogram({
      name: "paysvc_facilitator_latency_seconds",
      help: "Time each facilitator took to answer, by facilitator and operation",
      labelNames: ["facilitator", "operation"] as const,
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.requestsOf = childrenOf(this.requests);
    this.phaseOf = childrenOf(this.phases);
    this.prepaidTokensOf = childrenOf(this.prepaidTokens);
    this.providerCallsOf = childrenOf(this.providerCalls);
    this.providerLatencyOf = childrenOf(this.providerLatency);
    this.facilitatorCallsOf = childrenOf(this.facilitatorCalls);
    this.facilitatorLatencyOf = childrenOf(this.facilitatorLatency);
  }

  /** One call to a facilitator of the list, and how long it took. */
  facilitatorCall(
    facilitator: string,
    operation: FacilitatorOperation,
    outcome: "ok" | "failed",
    seconds: number,
  ): void {
    this.facilitatorCallsOf(facilitator, operation, outcome).inc();
    this.facilitatorLatencyOf(facilitator, operation).observe(seconds);
  }

  /** One call to a provider (a route of the catalog), and how long it took to answer (streams: the first event). */
  providerCall(provider: string, outcome: "ok" | "failed", seconds: number): void {
    this.providerCallsOf(provider, outcome).inc();
    this.providerLatencyOf(provider).observe(seconds);
  }

  request(endpoint: string, outcome: RequestOutcome): void {
    this.requestsOf(endpoint, outcome).inc();
  }

  /** A request answered with an error: its outcome from the status and code, and the counters that code moves. */
  failed(endpoint: string, status: number, code: string | undefined, refusedAs: "invalid" | "refused"): void {
    if (code === "upstream_error") this.upstreamErrors.inc({ endpoint });
    if (code === "free_tier_exhausted") this.freeTierRefusals.inc();
    this.request(endpoint, errorOutcome(status, code, refusedAs));
  }

  /** A settled payment. Counters are doubles: exact to 2^53 atomic units (9 billion USD of USDC). */
  settled(endpoint: string, model: string, amount: bigint): void {
    this.revenue.inc({ endpoint, model }, Number(amount));
  }

  /** What a stream delivered before its settlement was refused. */
  deliveredUnpaid(endpoint: string, model: string, amount: bigint): void {
    this.unpaid.inc({ endpoint, model }, Number(amount));
  }

  /** Each phase's duration, given in ms. */
  timed(payment: PaymentKind, timings: Record<string, number>): void {
    for (const phase in timings) this.phaseOf(payment, phase).observe(timings[phase]! / 1000);
  }

  prepaid(kind: "reserved" | "charged", model: string, tokens: number): void {
    this.prepaidTokensOf(model, kind).inc(tokens);
  }

  /**
   * A provider's input count beside the quote's, for a call billed in tokens: where they differ, how often and by
   * how much, so that an operator sees a formula that is off.
   */
  inputCounted(model: string, counted: number, reported: number | undefined): void {
    if (reported === undefined || reported === counted) return;
    const direction = reported > counted ? "over" : "under";
    this.inputCountDifferences.inc({ model, direction });
    this.inputCountDifferenceTokens.inc({ model, direction }, Math.abs(reported - counted));
  }

  /** A paid call refused by a rate limit of its payer. */
  rateLimited(payer: "key" | "wallet" | "address", limit: string): void {
    this.rateLimitRefusals.inc({ payer, limit });
  }

  facilitatorFailed(operation: FacilitatorOperation): void {
    this.facilitatorErrors.inc({ operation });
  }

  reconciledRows(outcome: string, count: number): void {
    if (count > 0) this.reconciled.inc({ outcome }, count);
  }
}

/**
 * An error answer's outcome: the provider failed, the server failed, or the request was refused; a 400-class
 * answer is `refusedAs` (`invalid` before the payment is looked at, `refused` after).
 */
function errorOutcome(status: number, code: string | undefined, refusedAs: "invalid" | "refused"): RequestOutcome {
  if (code === "upstream_error") return "upstream_failed";
  if (status >= 500) return "error";
  if ([401, 402, 403, 429].includes(status)) return "refused";
  return refusedAs;
}
