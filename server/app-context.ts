import { loadServiceConfig, type ServiceConfig } from "../config/env";
import { PaymentGateway } from "./payment/payment-gateway";
import { PaymentLedger } from "./payment/payment-ledger";
import type { PricedRequest } from "./payment/paid-request";
import { QuoteHold } from "./payment/quote-hold";
import { SettlementGasEstimator } from "./payment/settlement-gas";
import { PrepaidKeyStore } from "./prepaid/prepaid-key-store";
import { ClientAddressResolver } from "./free-tier/client-address";
import { FreeChatWindows } from "./free-tier/free-chat-windows";
import { openDatabase, type AppDatabase } from "./storage/database";
import { OpenAiUpstream } from "./upstream/openai-upstream";
import type { ApiRequest } from "./http/api-request";

/** Everything a request handler needs, built once per process from validated configuration. */
export interface AppContext {
  config: ServiceConfig;
  database: AppDatabase;
  ledger: PaymentLedger;
  prepaidKeys: PrepaidKeyStore;
  gateway: PaymentGateway;
  gasEstimator?: SettlementGasEstimator;
  quoteHold?: QuoteHold<PricedRequest>;
  upstream: OpenAiUpstream;
  imageUpstream: OpenAiUpstream;
  embeddingsUpstream: OpenAiUpstream;
  clientAddresses: ClientAddressResolver;
  freeChatWindows: FreeChatWindows;
  decisionUpstream: OpenAiUpstream;
}

export function createAppContext(config: ServiceConfig): AppContext {
  const database = openDatabase(config.databaseUrl, { walFlush: true });
  const prepaidKeys = new PrepaidKeyStore(database);
  // Reservations left by a process that died have expired or will; they no longer count, so tidy them away.
  prepaidKeys.deleteExpired();
  return {
    config,
    database,
    ledger: new PaymentLedger(database),
    prepaidKeys,
    gateway: new PaymentGateway({
      network: config.network,
      payTo: config.payTo,
      facilitatorUrl: config.facilitatorUrl,
      facilitatorTimeoutMs: config.facilitatorTimeoutMs,
      paymentTimeoutSeconds: config.paymentTimeoutSeconds,
    }),
    ...gasPricing(config),
    upstream: new OpenAiUpstream(config.upstream),
    imageUpstream: new OpenAiUpstream(config.imageUpstream),
    embeddingsUpstream: new OpenAiUpstream(config.embeddingsUpstream),
    clientAddresses: new ClientAddressResolver(config.trustedProxies),
    freeChatWindows: new FreeChatWindows(database),
    decisionUpstream: new OpenAiUpstream(config.decisionUpstream),
  };
}

/** Networks that price settlement gas live get an estimator and a hold that keeps quotes payable. */
function gasPricing(config: ServiceConfig): Pick<AppContext, "gasEstimator" | "quoteHold"> {
  const { network } = config;
  if (network.kind !== "evm" || !network.settlementGas || !config.chainRpcUrl) return {};
  return {
    gasEstimator: new SettlementGasEstimator(
      { ...network, settlementGas: network.settlementGas },
      config.chainRpcUrl,
      config.payTo,
    ),
    quoteHold: new QuoteHold<PricedRequest>(),
  };
}

// Route modules may be evaluated more than once by the framework; the context must still be one per process.
const holder = globalThis as typeof globalThis & { paysvcAppContext?: AppContext };

export function getAppContext(): AppContext {
  holder.paysvcAppContext ??= createAppContext(loadServiceConfig());
  return holder.paysvcAppContext;
}

/** The origin callers use: PUBLIC_BASE_URL, else the Host the caller sent (request.url names the bind address). */
export function publicOrigin(context: AppContext, request: ApiRequest): string {
  if (context.config.publicBaseUrl) return context.config.publicBaseUrl;
  const url = new URL(request.url);
  return `${url.protocol}//${request.headers.get("host") ?? url.host}`;
}

/** Where prepaid keys are used: PREPAID_API_BASE, else this deployment's origin + /v1. */
export function prepaidApiBase(context: AppContext, request: ApiRequest): string {
  return context.config.prepaid.apiBase ?? `${publicOrigin(context, request)}/v1`;
}

/**
 * The URL a caller used for this request: the configured public origin (set PUBLIC_BASE_URL behind a proxy),
 * else the Host the caller sent; the framework's own request.url names its bind address instead.
 */
export function resourceUrl(context: AppContext, request: ApiRequest): string {
  return `${publicOrigin(context, request)}${new URL(request.url).pathname}`;
}
