import { loadServiceConfig, type ServiceConfig } from "../config/env";
import { PaymentGateway } from "./payment/payment-gateway";
import { PaymentLedger } from "./payment/payment-ledger";
import { openDatabase, type AppDatabase } from "./storage/database";
import { OpenAiUpstream } from "./upstream/openai-upstream";

/** Everything a request handler needs, built once per process from validated configuration. */
export interface AppContext {
  config: ServiceConfig;
  database: AppDatabase;
  ledger: PaymentLedger;
  gateway: PaymentGateway;
  upstream: OpenAiUpstream;
  imageUpstream: OpenAiUpstream;
  decisionUpstream: OpenAiUpstream;
}

export function createAppContext(config: ServiceConfig): AppContext {
  const database = openDatabase(config.databaseUrl);
  return {
    config,
    database,
    ledger: new PaymentLedger(database),
    gateway: new PaymentGateway({
      network: config.network,
      payTo: config.payTo,
      facilitatorUrl: config.facilitatorUrl,
      facilitatorTimeoutMs: config.facilitatorTimeoutMs,
      paymentTimeoutSeconds: config.paymentTimeoutSeconds,
    }),
    upstream: new OpenAiUpstream(config.upstream),
    imageUpstream: new OpenAiUpstream(config.imageUpstream),
    decisionUpstream: new OpenAiUpstream(config.decisionUpstream),
  };
}

// Route modules may be evaluated more than once by the framework; the context must still be one per process.
const holder = globalThis as typeof globalThis & { paysvcAppContext?: AppContext };

export function getAppContext(): AppContext {
  holder.paysvcAppContext ??= createAppContext(loadServiceConfig());
  return holder.paysvcAppContext;
}

/**
 * The URL a caller used for this request: the configured public origin (set PUBLIC_BASE_URL behind a proxy),
 * else the Host the caller sent; the framework's own request.url names its bind address instead.
 */
export function resourceUrl(context: AppContext, request: Request): string {
  const url = new URL(request.url);
  const origin = context.config.publicBaseUrl ?? `${url.protocol}//${request.headers.get("host") ?? url.host}`;
  return `${origin}${url.pathname}`;
}
