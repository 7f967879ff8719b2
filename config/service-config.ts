import type { z } from "zod";
import { channelSettings, type ChannelSettings } from "./channels";
import type { NetworkDefinition } from "../networks";
import { loadCatalog } from "./catalog/load-catalog";
import type { DefaultRoutes } from "./catalog/default-catalog";
import { catalogProviders, type ModelCatalog, type Route } from "./catalog/model-catalog";
import { collectProblems, ConfigurationError, type Environment } from "./configuration-error";
import type { CorsOrigins } from "./cors-origins";
import { networkWithAddresses, parse, sharedSchema, withoutEmpty, type TrustedProxies } from "./env";
import { loadFacilitators, type FacilitatorEntry } from "./facilitators";
import { freeEmbeddingsSettings, type FreeEmbeddingsSettings } from "./free-tier";
import { rateLimitSettings, type RateLimitSettings } from "./rate-limits";
import { tracingSettings, type TracingSettings } from "./tracing";
import { insecureUrlProblem } from "./host-urls";
import { UPTO_MIN_VALIDITY_MS } from "./limits";

/** What the provider routes share: how long a provider may take, and when one that keeps failing is skipped. */
/** What open connections may hold: how many, from one address, and how long a request may take to arrive. */
export interface ConnectionLimits {
  total: number;
  perAddress: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

export interface ProviderSettings {
  /** Time allowed for a provider's answer (streams: its first data event). */
  timeoutMs: number;
  /** Failures in a row after which a provider is skipped. */
  failureThreshold: number;
  /** How long a provider that reached the threshold is skipped before one call tries it again. */
  cooldownMs: number;
  /** Requests of one caller under way at once on the routes that call a provider (PROVIDER_CALLS_PER_ADDRESS). */
  callsPerAddress: number;
}

/** Configuration of the HTTP service itself (the app process). Every piece must be present. */
export interface ServiceConfig {
  network: NetworkDefinition;
  /** The chain's RPC, for networks whose quotes include a live gas estimate. */
  chainRpcUrl: string | undefined;
  /** The RPC the console names to browser wallets (wallet_addEthereumChain); undefined: the network's public one. */
  walletRpcUrl: string | undefined;
  publicBaseUrl: string | undefined;
  payTo: string;
  /** The facilitators, in the order verify tries them; the built-in one's URL is empty until it runs. */
  facilitators: FacilitatorEntry[];
  /** Each facilitator's calls' time limit, and when one that keeps failing is skipped. */
  facilitatorTimeoutMs: number;
  facilitatorBreaker: { failureThreshold: number; cooldownMs: number };
  /** The models sold and served free, their prices, limits and the providers that serve them, in order. */
  catalog: ModelCatalog;
  providers: ProviderSettings;
  /** The free embeddings' per-caller windows and input cap. */
  freeEmbeddings: FreeEmbeddingsSettings;
  /** How fast one prepaid key and one paying wallet may go (RATE_LIMIT_*). */
  rateLimits: RateLimitSettings;
  /** How long /health reuses a facilitator's or provider's probe (HEALTH_PROBE_SECONDS). */
  healthProbeMs: number;
  /** Where spans are exported (OTEL_* variables); undefined: tracing is off. */
  tracing: TracingSettings | undefined;
  /** Proxies whose forwarded header is believed; everyone else is identified by the socket's address. */
  trustedProxies: TrustedProxies;
  decisionModelVersion: string;
  prepaid: {
    /** Where prepaid keys are used; undefined means this deployment's origin + /v1. */
    apiBase: string | undefined;
    /** How long a reservation of a call in flight counts if its process dies; live calls extend it. */
    reservationTtlMs: number;
  };
  databaseUrl: string;
  /** PostgreSQL connections per process; callers beyond it queue. */
  databasePoolSize: number;
  /** How long a request waits for the database (a connection, then each statement) before it is answered 503. */
  databaseTimeoutMs: number;
  paymentTimeoutSeconds: number;
  /**
   * Whether a chat or Responses 402 also offers the `upto` scheme (the caller signs the quote as a
   * maximum and is charged the tokens used), where the facilitator lists it for the network.
   */
  upto: boolean;
  /** x402 `batch-settlement` channels, where offered (config/channels.ts). */
  channels: ChannelSettings | undefined;
  /**
   * `overlap`: verify runs beside the upstream's start, and a stream is passed on while its payment settles, except
   * for a payer whose stream went unpaid within `strictAfterUnpaidMs`; `strict`: verify, work, settle, answer.
   */
  settlement: { order: "overlap" | "strict"; strictAfterUnpaidMs: number };
  /** The bearer token GET /metrics asks for; undefined: no metrics endpoint (404). */
  metricsToken: string | undefined;
  /** The token that signs the operator in to /operator; undefined: no operator's page (404). */
  operatorToken: string | undefined;
  /** How often the process reconciles the ledger's open rows in the background; 0: never. */
  reconcileIntervalMs: number;
  /** How long a paid answer is kept for a retry under its payment-identifier. */
  paymentIdTtlMs: number;
  /** On SIGTERM: how long the requests and streams under way may take before the streams are cut. */
  shutdownGraceMs: number;
  /** How long a stream waits for a caller that reads nothing before it is cut (STREAM_STALL_SECONDS). */
  streamStallMs: number;
  /** What open connections may hold (MAX_CONNECTIONS, MAX_CONNECTIONS_PER_ADDRESS, *_TIMEOUT_SECONDS). */
  connections: ConnectionLimits;
  /** Origins whose pages may read the API's answers (CORS). */
  corsOrigins: CorsOrigins;
}

type SharedValues = z.output<typeof sharedSchema>;

/**
 * The routes of the spec's tables: UPSTREAM_BASE_URL serves every model, unless images, decisions or embeddings
 * have a provider configured apart (with its own key).
 */
function defaultRoutes(values: SharedValues): DefaultRoutes {
  const route = (provider: string, baseUrl: string | undefined, keyVariable: string, apiKey: string | undefined) =>
    baseUrl
      ? ({ provider, baseUrl, apiKeyVariable: apiKey ? keyVariable : undefined, apiKey, headers: {} } satisfies Omit<
          Route,
          "model"
        >)
      : undefined;
  return {
    chat: route("upstream", values.UPSTREAM_BASE_URL, "UPSTREAM_API_KEY", values.UPSTREAM_API_KEY),
    image: route(
      "image-upstream",
      values.IMAGE_UPSTREAM_BASE_URL,
      "IMAGE_UPSTREAM_API_KEY",
      values.IMAGE_UPSTREAM_API_KEY,
    ),
    decision: route(
      "decision-upstream",
      values.DECISION_UPSTREAM_BASE_URL,
      "DECISION_UPSTREAM_API_KEY",
      values.DECISION_UPSTREAM_API_KEY,
    ),
    embeddings: route(
      "embeddings-upstream",
      values.EMBEDDINGS_UPSTREAM_BASE_URL,
      "EMBEDDINGS_UPSTREAM_API_KEY",
      values.EMBEDDINGS_UPSTREAM_API_KEY,
    ),
  };
}

/** The catalog in force; `serving`: every model needs a provider, and every provider's key must be set. */
function catalogFrom(values: SharedValues, env: Environment, serving: boolean): ModelCatalog {
  return loadCatalog({
    file: values.PAYSVC_CATALOG,
    defaultRoutes: defaultRoutes(values),
    environment: withoutEmpty(env),
    serving,
  });
}

/** The catalog a command that only reads prices uses (`paysvc quote`, the discovery documents). */
export function loadPriceCatalog(env: Environment = process.env): ModelCatalog {
  return catalogFrom(parse(sharedSchema, env), env, false);
}

/**
 * The app process's configuration, refused with one line per problem. `facilitatorProvided`: the caller runs the
 * built-in facilitator and gives the app its URL (`paysvc start` with CHAIN_RPC_URL and a key).
 */
export function loadServiceConfig(
  env: Environment = process.env,
  options: { facilitatorProvided?: boolean } = {},
): ServiceConfig {
  const values = parse(sharedSchema, env);
  const network = networkWithAddresses(values);
  const problems: string[] = [];
  if (!values.PAY_TO) problems.push("PAY_TO: required: the address that receives payments");
  const facilitators = collectProblems(problems, () => loadFacilitators(env));
  if (facilitators?.length === 0 && !options.facilitatorProvided) {
    problems.push(
      "FACILITATOR_URL: required: the x402 facilitator that verifies and settles payments (or FACILITATORS, an ordered list; or CHAIN_RPC_URL and FACILITATOR_PRIVATE_KEY for the built-in one)",
    );
  }
  for (const entry of facilitators ?? []) {
    if (entry.builtIn && !entry.url && !options.facilitatorProvided) {
      problems.push(
        "FACILITATORS: built-in is run by `paysvc start` (with CHAIN_RPC_URL and FACILITATOR_PRIVATE_KEY); this process cannot start it",
      );
    }
  }
  if (network.usdc.addressFromConfiguration && !values.USDC_ADDRESS) {
    problems.push(`USDC_ADDRESS: required on ${network.id}: the USDC contract address`);
  }
  // Networks that price gas into quotes read the gas price from the chain.
  if (network.settlementGas && !values.CHAIN_RPC_URL) {
    problems.push(`CHAIN_RPC_URL: required on ${network.id}: quotes include the live gas price read from it`);
  }
  // An upto payer signs its deadline PAYMENT_TIMEOUT_SECONDS ahead, and less than UPTO_MIN_VALIDITY_MS is refused.
  const uptoOffered = values.X402_UPTO && network.kind === "evm";
  if (uptoOffered && values.PAYMENT_TIMEOUT_SECONDS * 1000 < UPTO_MIN_VALIDITY_MS) {
    problems.push(
      `PAYMENT_TIMEOUT_SECONDS: at least ${UPTO_MIN_VALIDITY_MS / 1000} while X402_UPTO is on: an upto payer signs its deadline that far ahead, and a payment with less than ${UPTO_MIN_VALIDITY_MS / 1000} s to answer and settle is refused; raise it, or set X402_UPTO=off`,
    );
  }
  const channels = channelSettings(values, network, problems);
  const catalog = collectProblems(problems, () => catalogFrom(values, env, true));
  if (catalog) problems.push(...insecureProviders(catalog));
  const tracing = tracingSettings(env, problems);
  if (problems.length > 0 || !catalog) throw new ConfigurationError(problems);
  return {
    network,
    chainRpcUrl: values.CHAIN_RPC_URL,
    walletRpcUrl: values.WALLET_RPC_URL,
    publicBaseUrl: values.PUBLIC_BASE_URL,
    payTo: values.PAY_TO as string,
    facilitators: facilitators!,
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    facilitatorBreaker: {
      failureThreshold: values.FACILITATOR_FAILURE_THRESHOLD,
      cooldownMs: values.FACILITATOR_COOLDOWN_SECONDS * 1000,
    },
    catalog,
    providers: {
      timeoutMs: values.UPSTREAM_TIMEOUT_MS,
      failureThreshold: values.PROVIDER_FAILURE_THRESHOLD,
      cooldownMs: values.PROVIDER_COOLDOWN_SECONDS * 1000,
      callsPerAddress: values.PROVIDER_CALLS_PER_ADDRESS,
    },
    freeEmbeddings: freeEmbeddingsSettings(values),
    rateLimits: rateLimitSettings(values),
    healthProbeMs: values.HEALTH_PROBE_SECONDS * 1000,
    tracing,
    trustedProxies: { addresses: values.TRUSTED_PROXIES, header: values.TRUSTED_PROXY_HEADER },
    decisionModelVersion: values.DECISION_MODEL_VERSION,
    prepaid: {
      apiBase: values.PREPAID_API_BASE,
      reservationTtlMs: values.PREPAID_RESERVATION_TTL_SECONDS * 1000,
    },
    databaseUrl: values.DATABASE_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    databaseTimeoutMs: values.DATABASE_TIMEOUT_SECONDS * 1000,
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
    upto: values.X402_UPTO,
    channels,
    settlement: { order: values.SETTLEMENT_ORDER, strictAfterUnpaidMs: values.SETTLEMENT_STRICT_SECONDS * 1000 },
    metricsToken: values.METRICS_TOKEN,
    operatorToken: values.OPERATOR_TOKEN,
    reconcileIntervalMs: values.RECONCILE_INTERVAL_SECONDS * 1000,
    paymentIdTtlMs: values.PAYMENT_ID_TTL_SECONDS * 1000,
    shutdownGraceMs: values.SHUTDOWN_GRACE_SECONDS * 1000,
    streamStallMs: values.STREAM_STALL_SECONDS * 1000,
    connections: {
      total: values.MAX_CONNECTIONS,
      perAddress: values.MAX_CONNECTIONS_PER_ADDRESS,
      headersTimeoutMs: values.HEADERS_TIMEOUT_SECONDS * 1000,
      requestTimeoutMs: Math.max(values.REQUEST_TIMEOUT_SECONDS, values.HEADERS_TIMEOUT_SECONDS) * 1000,
    },
    corsOrigins: values.CORS_ORIGINS,
  };
}

/** Providers are sent their keys and the callers' prompts: https unless on this machine. */
function insecureProviders(catalog: ModelCatalog): string[] {
  return catalogProviders(catalog).flatMap(({ provider, route }) => {
    const problem = insecureUrlProblem(route.baseUrl);
    if (!problem) return [];
    const variable = DEFAULT_ROUTE_VARIABLES[provider] ?? `PAYSVC_CATALOG (provider ${provider})`;
    return [`${variable}: ${problem}`];
  });
}

const DEFAULT_ROUTE_VARIABLES: Record<string, string> = {
  upstream: "UPSTREAM_BASE_URL",
  "image-upstream": "IMAGE_UPSTREAM_BASE_URL",
  "decision-upstream": "DECISION_UPSTREAM_BASE_URL",
  "embeddings-upstream": "EMBEDDINGS_UPSTREAM_BASE_URL",
};

/** The chain a deployment's payments are read from: CHAIN_RPC_URL, else the network's public RPC. */
export function chainRpcUrlOf(config: Pick<ServiceConfig, "network" | "chainRpcUrl">): string {
  return config.chainRpcUrl ?? config.network.defaultRpcUrl;
}
