import { PayerFundsReader } from "../payment/payer-funds";
import { chainRpcUrlOf, type ServiceConfig } from "../../config/service-config";
import { catalogModels } from "../../config/catalog/model-catalog";
import { identifierHoldMs, PaidRetries } from "../billing/paid-retries";
import type { PaymentMethods } from "../billing/payment-methods";
import { paymentMethods } from "./payment-registry";
import { pricedRequestCodec, type LiveGas } from "../billing/x402-price";
import type { PricedRequest } from "../billing/schemes/payment-scheme";
import type { CatalogEndpoint } from "../discovery/catalog-endpoint";
import { LocalSignatureCheck } from "../payment/local-signature";
import type { PaymentGateway } from "../payment/payment-gateway";
import { gatewayFor } from "../payment/gateway-for";
import { QuoteHold, type QuoteHoldStore } from "../payment/quote-hold";
import { SettlementGasEstimator } from "../payment/settlement-gas";
import type { PrepaidKeyStore } from "../prepaid/prepaid-key-store";
import { ClientAddressResolver } from "../http/client-address";
import { freeChatWindows, freeEmbeddingsWindows } from "../windows/free-windows";
import { RateLimiter } from "../limits/rate-limiter";
import type { OwnedKeyStore } from "../prepaid/owned-keys";
import type { WalletSignIn } from "../auth/wallet-sign-in";
import { walletSignInOf } from "./wallet-sign-in-of";
import { ProviderShares } from "../limits/provider-share";
import { QuoteLimiter } from "../limits/quote-limiter";
import { SessionStore } from "../auth/session-store";
import { EarlyAdmissions } from "../limits/early-admission";
import type { CallerWindows } from "../windows/caller-windows";
import { openStorage } from "../storage/open-storage";
import type { Storage } from "../storage/storage";
import { ProviderRoutes } from "../upstream/provider-routes";
import { ServiceMetrics } from "../metrics/service-metrics";
import { reconcileInBackground } from "../reconcile/background-reconcile";
import { LastReconciliation } from "../reconcile/last-reconciliation";
import { Drain } from "../lifecycle/drain";
import { DeferredWrites } from "../lifecycle/deferred-writes";
import { channelScheme } from "../payment/channel-scheme";
import { claimInBackground } from "../channels/claim-in-background";
import type { ClaimServices } from "../channels/channel-claims";
import { ReceiverPayouts } from "../channels/receiver-payouts";
import { BATCH_SETTLEMENT_ADDRESS } from "@x402/evm";

/** Everything a request handler needs, built once per process from validated configuration. */
export interface AppContext {
  config: ServiceConfig;
  /** The database's stores, on SQLite or PostgreSQL. */
  storage: Storage;
  prepaidKeys: PrepaidKeyStore;
  gateway: PaymentGateway;
  /** Keys as their owners (signed-in wallets) and the operator see and change them. */
  ownedKeys: OwnedKeyStore;
  /** Sign-in with the paying wallet (x402's sign-in-with-x), for the owners' endpoints. */
  signIn: WalletSignIn;
  /** Every kind of browser session (the operator's, the wallets'), over the database (auth/session-store.ts). */
  sessions: SessionStore;
  /** The ways a call is paid for (a prepaid key, x402, MPP), which billing asks (billing/payment-methods.ts). */
  payments: PaymentMethods;
  /** The endpoints as the discovery documents describe them. */
  catalog: readonly CatalogEndpoint[];
  /** The providers of every model of the catalog in force, in order, with their circuit breakers. */
  providers: ProviderRoutes;
  clientAddresses: ClientAddressResolver;
  freeChatWindows: CallerWindows;
  freeEmbeddingsWindows: CallerWindows;
  /** How fast one prepaid key or paying wallet may go, over every instance (limits/rate-limiter.ts). */
  limits: RateLimiter;
  /** The limits' admissions of prepaid calls asked with their reservations (limits/early-admission.ts). */
  earlyAdmissions: EarlyAdmissions;
  /** How many unpaid quotes one caller may ask of this instance (limits/quote-limiter.ts). */
  quoteLimits: QuoteLimiter;
  /** How many requests to models one caller may have under way in this process (limits/provider-share.ts). */
  providerShares: ProviderShares;
  /** This process's metrics (GET /metrics). */
  metrics: ServiceMetrics;
  /** The way out on SIGTERM: what is under way, and the deadline that cuts the streams still running. */
  drain: Drain;
  /** Records of what already happened (a settlement, a prepaid charge) waiting for a database away for now. */
  writes: DeferredWrites;
  /** This process's last background reconciliation. */
  reconciliation: LastReconciliation;
  /** What claims and pays out the deployment's batch-settlement channels (EVM, channels configured). */
  channels: ClaimServices | undefined;
}

/** The context, once the database is reached and migrated; fails with a clear message when it cannot be. */
export async function createAppContext(
  config: ServiceConfig,
  catalog: readonly CatalogEndpoint[],
): Promise<AppContext> {
  const storage = await openStorage(config.databaseUrl, {
    poolSize: config.databasePoolSize,
    timeoutMs: config.databaseTimeoutMs,
    walFlush: true,
  });
  const { prepaidKeys, ledger } = storage;
  // Reservations left by a process that died: ended now, what they held freed (reserving and balances also sweep).
  await prepaidKeys.deleteExpired();
  const metrics = new ServiceMetrics(config.network.id);
  const channels = config.channels && channelScheme(config.payTo, config.channels, storage.channels);
  const gateway = gatewayFor(
    config,
    (facilitator, operation, outcome, seconds) => metrics.facilitatorCall(facilitator, operation, outcome, seconds),
    channels,
  );
  const drain = new Drain();
  const writes = new DeferredWrites((work) => drain.keep(work));
  // On the way out, in order: the reconciliation stops, what channels owe is claimed, the writes still waiting for
  // the database are given up on.
  const reconciliation = new LastReconciliation();
  const background = { ledger, gateway, metrics, prepaidKeys, channels: storage.channels, last: reconciliation };
  drain.onStop(reconcileInBackground(config, background));
  const claims: ClaimServices | undefined =
    channels && config.network.kind === "evm"
      ? {
          scheme: channels,
          storage: storage.channels,
          gateway,
          ledger,
          writes,
          network: config.network,
          payouts: new ReceiverPayouts(config.network, chainRpcUrlOf(config), BATCH_SETTLEMENT_ADDRESS),
        }
      : undefined;
  if (claims && config.channels) {
    drain.onStop(
      claimInBackground({
        ...claims,
        settings: config.channels.claims,
        chainRpcUrl: chainRpcUrlOf(config),
        contract: BATCH_SETTLEMENT_ADDRESS,
        exclusive: (name, work) => storage.exclusive(name, work),
      }),
    );
  }
  drain.onStop(() => writes.abandon());
  const retries = new PaidRetries(
    storage.paidAnswers,
    config.paymentIdTtlMs,
    identifierHoldMs({
      routes: Math.max(...catalogModels(config.catalog).map(({ model }) => model.routes.length)),
      upstreamTimeoutMs: config.providers.timeoutMs,
      facilitatorTimeoutMs: config.facilitatorTimeoutMs,
    }),
  );
  // What every x402 payment works with, whatever its scheme.
  const services = {
    gateway,
    ledger,
    metrics,
    retries,
    gas: liveGas(config, storage.quoteHolds),
    keep: <T>(work: Promise<T>) => drain.keep(work),
    writes,
  };
  // Payments' signatures and signed-in wallets' messages, checked alike (payment/local-signature.ts).
  const signatures = new LocalSignatureCheck(config.network, chainRpcUrlOf(config));
  const sessions = new SessionStore(() => storage.sessions);
  const limits = new RateLimiter(storage.limitLog, config.rateLimits, prepaidKeys, (payer, limit) =>
    metrics.rateLimited(payer, limit),
  );
  return {
    config,
    storage,
    prepaidKeys,
    ownedKeys: storage.ownedKeys,
    signIn: await walletSignInOf(config, storage, signatures, sessions),
    sessions,
    gateway,
    payments: await paymentMethods(config, storage, {
      ...services,
      signatures,
      funds: new PayerFundsReader(config.network, chainRpcUrlOf(config)),
      payerHolds: storage.payerHolds,
      channels,
      settlement: config.settlement,
    }),
    catalog,
    providers: new ProviderRoutes(config.catalog, config.providers, metrics),
    clientAddresses: new ClientAddressResolver(config.trustedProxies),
    freeChatWindows: freeChatWindows(storage.windowLog),
    freeEmbeddingsWindows: freeEmbeddingsWindows(storage.windowLog, config.freeEmbeddings),
    limits,
    earlyAdmissions: new EarlyAdmissions(limits),
    quoteLimits: new QuoteLimiter(config.rateLimits.quotesPerMinute, () => metrics.rateLimited("address", "requests")),
    providerShares: new ProviderShares(config.providers.callsPerAddress, () =>
      metrics.rateLimited("address", "concurrent"),
    ),
    metrics,
    drain,
    writes,
    reconciliation,
    channels: claims,
  };
}

/** Networks that price settlement gas live get an estimator and a hold that keeps quotes payable. */
function liveGas(config: ServiceConfig, holds: QuoteHoldStore): LiveGas | undefined {
  const { network } = config;
  if (network.kind !== "evm" || !network.settlementGas || !config.chainRpcUrl) return undefined;
  return {
    estimator: new SettlementGasEstimator(
      { ...network, settlementGas: network.settlementGas },
      config.chainRpcUrl,
      config.payTo,
    ),
    hold: new QuoteHold<PricedRequest>(holds, pricedRequestCodec),
  };
}
