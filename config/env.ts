import { z } from "zod";
import { addressProblem, getNetwork, networkIds, type NetworkDefinition } from "../networks";
import { databaseLocation, DatabaseUrlError } from "./database-url";
import { DEFAULT_DECISION_MODEL_VERSION } from "./decision-model";
import { parseAddressRange } from "./address-range";
import { corsOriginsSchema, type CorsOrigins } from "./cors-origins";
import { loadCatalog } from "./catalog/load-catalog";
import type { DefaultRoutes } from "./catalog/default-catalog";
import type { ModelCatalog, Route } from "./catalog/model-catalog";
import { ConfigurationError, type Environment } from "./configuration-error";

export { ConfigurationError } from "./configuration-error";
export type { Environment } from "./configuration-error";

/** With dev-launch-config.ts, the only module that reads process.env: everything else receives validated values. */

export const port = (fallback: number) =>
  z.coerce
    .number({ error: "must be a port number" })
    .int("must be a whole number")
    .min(0, "must be 0 to 65535 (0 picks a free port)")
    .max(65535, "must be 0 to 65535")
    .default(fallback);

export const optionalUrl = z
  .string()
  .trim()
  .url("must be an absolute URL such as https://example.com")
  .refine((value) => /^https?:\/\//.test(value), "must be an http(s) URL")
  .transform((value) => value.replace(/\/+$/, ""))
  .optional();

/** An account address of some network; `networkWithAddresses` checks it against NETWORK's format. */
const optionalAddress = z
  .string()
  .trim()
  .superRefine((value, context) => {
    const problem = addressProblem(undefined, value);
    if (problem) context.addIssue({ code: "custom", message: problem });
  })
  .optional();

const positiveInteger = (fallback: number) => z.coerce.number().int().positive().default(fallback);
const nonNegativeInteger = (fallback: number) => z.coerce.number().int().nonnegative().default(fallback);

/** Empty strings count as unset, so `PAY_TO= npm start` behaves like not setting it. */
export function withoutEmpty(env: Environment): Environment {
  return Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ""));
}

/** The request header a trusted proxy writes the client's address into. */
export const forwardedHeaders = ["x-forwarded-for", "forwarded"] as const;
export type ForwardedHeader = (typeof forwardedHeaders)[number];

export interface TrustedProxies {
  /** IPs and CIDR ranges of the proxies in front of the service. */
  addresses: string[];
  /** The one header of theirs that is read; the other is ignored, whoever wrote it. */
  header: ForwardedHeader;
}

export const sharedSchema = z.object({
  NETWORK: z
    .string()
    .default("eip155:137")
    .refine((value) => (networkIds as string[]).includes(value), `must be one of ${networkIds.join(", ")}`),
  PUBLIC_BASE_URL: optionalUrl,
  PAY_TO: optionalAddress,
  USDC_ADDRESS: optionalAddress,
  CHAIN_RPC_URL: optionalUrl,
  FACILITATOR_URL: optionalUrl,
  UPSTREAM_BASE_URL: optionalUrl,
  UPSTREAM_API_KEY: z.string().optional(),
  IMAGE_UPSTREAM_BASE_URL: optionalUrl,
  IMAGE_UPSTREAM_API_KEY: z.string().optional(),
  DECISION_UPSTREAM_BASE_URL: optionalUrl,
  DECISION_UPSTREAM_API_KEY: z.string().optional(),
  DECISION_MODEL_VERSION: z
    .string()
    .regex(/^[\w.-]{1,64}$/, "must be a version name such as jev-2026-11-01")
    .default(DEFAULT_DECISION_MODEL_VERSION),
  EMBEDDINGS_UPSTREAM_BASE_URL: optionalUrl,
  EMBEDDINGS_UPSTREAM_API_KEY: z.string().optional(),
  // The operator's catalog of models, prices and providers (JSON); unset: the spec's tables over UPSTREAM_BASE_URL.
  PAYSVC_CATALOG: z.string().trim().optional(),
  // A provider that fails this many calls in a row is skipped for the cooldown, then tried again with one call.
  PROVIDER_FAILURE_THRESHOLD: positiveInteger(3),
  PROVIDER_COOLDOWN_SECONDS: positiveInteger(30),
  TRUSTED_PROXIES: z
    .string()
    .default("")
    .transform((value) =>
      value
        .split(",")
        .map((entry) => entry.trim())
        .filter((entry) => entry.length > 0),
    )
    .refine(
      (entries) => entries.every((entry) => parseAddressRange(entry) !== undefined),
      "must be a comma-separated list of IP addresses or CIDR ranges, such as 10.0.0.0/8,127.0.0.1",
    ),
  // One header only: a proxy that appends to one passes the other through as the client wrote it.
  TRUSTED_PROXY_HEADER: z
    .string()
    .trim()
    .toLowerCase()
    .default("x-forwarded-for")
    .pipe(z.enum(forwardedHeaders, { error: `must be ${forwardedHeaders.join(" or ")}` })),
  CORS_ORIGINS: corsOriginsSchema,
  PREPAID_API_BASE: optionalUrl,
  PREPAID_RESERVATION_TTL_SECONDS: positiveInteger(600),
  DATABASE_URL: z
    .string()
    .default("file:./data/paysvc.sqlite")
    .superRefine((url, context) => {
      try {
        databaseLocation(url);
      } catch (error) {
        if (!(error instanceof DatabaseUrlError)) throw error;
        context.addIssue({ code: "custom", message: error.problem });
      }
    }),
  DATABASE_POOL_SIZE: positiveInteger(10),
  UPSTREAM_TIMEOUT_MS: positiveInteger(120_000),
  FACILITATOR_TIMEOUT_MS: positiveInteger(30_000),
  PAYMENT_TIMEOUT_SECONDS: positiveInteger(300),
  // How long a paid answer is kept for a retry under its payment-identifier.
  PAYMENT_ID_TTL_SECONDS: positiveInteger(3600),
  // How often each app process reconciles the ledger's open rows with the chain; 0: never (run the command).
  RECONCILE_INTERVAL_SECONDS: nonNegativeInteger(300),
  // A bearer token for GET /metrics; long enough not to be guessed.
  METRICS_TOKEN: z
    .string()
    .trim()
    .regex(
      /^[\x21-\x7e]{16,}$/,
      "must be at least 16 printable characters without spaces, such as `openssl rand -hex 24`",
    )
    .optional(),
});

export function parse<T extends z.ZodType>(schema: T, env: Environment): z.output<T> {
  const result = schema.safeParse(withoutEmpty(env));
  if (result.success) return result.data;
  throw new ConfigurationError(
    result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}. Set it in the environment.`),
  );
}

/** The network, and the address-shaped values checked against its address format (EVM checksum, base58). */
export function networkWithAddresses(values: { NETWORK: string; PAY_TO?: string; USDC_ADDRESS?: string }) {
  const network = getNetwork(values.NETWORK);
  const problems: string[] = [];
  for (const name of ["PAY_TO", "USDC_ADDRESS"] as const) {
    const value = values[name];
    const problem = value === undefined ? undefined : addressProblem(network, value);
    if (problem) problems.push(`${name}: ${problem}. Set it in the environment.`);
  }
  if (values.USDC_ADDRESS && network.kind === "svm") {
    problems.push(`USDC_ADDRESS: ${network.id} uses the USDC mint ${network.usdc.address}; leave it unset`);
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return getNetwork(values.NETWORK, values.USDC_ADDRESS);
}

/** What the provider routes share: how long a provider may take, and when one that keeps failing is skipped. */
export interface ProviderSettings {
  /** Time allowed for a provider's answer (streams: its first data event). */
  timeoutMs: number;
  /** Failures in a row after which a provider is skipped. */
  failureThreshold: number;
  /** How long a provider that reached the threshold is skipped before one call tries it again. */
  cooldownMs: number;
}

/** Configuration of the HTTP service itself (the app process). Every piece must be present. */
export interface ServiceConfig {
  network: NetworkDefinition;
  /** The chain's RPC, for networks whose quotes include a live gas estimate. */
  chainRpcUrl: string | undefined;
  publicBaseUrl: string | undefined;
  payTo: string;
  facilitatorUrl: string;
  facilitatorTimeoutMs: number;
  /** The models sold and served free, their prices, limits and the providers that serve them, in order. */
  catalog: ModelCatalog;
  providers: ProviderSettings;
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
  paymentTimeoutSeconds: number;
  /** The bearer token GET /metrics asks for; undefined: no metrics endpoint (404). */
  metricsToken: string | undefined;
  /** How often the process reconciles the ledger's open rows in the background; 0: never. */
  reconcileIntervalMs: number;
  /** How long a paid answer is kept for a retry under its payment-identifier. */
  paymentIdTtlMs: number;
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
export function catalogFrom(values: SharedValues, env: Environment, serving: boolean): ModelCatalog {
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

/** The problems of a catalog, collected with the others rather than thrown alone. */
function collect<T>(problems: string[], load: () => T): T | undefined {
  try {
    return load();
  } catch (error) {
    if (!(error instanceof ConfigurationError)) throw error;
    problems.push(...error.problems);
    return undefined;
  }
}

/**
 * The app process's configuration, refused with one line per problem. `facilitatorProvided`: the caller runs the
 * built-in facilitator and will set FACILITATOR_URL itself (`paysvc start` with CHAIN_RPC_URL and a key).
 */
export function loadServiceConfig(
  env: Environment = process.env,
  options: { facilitatorProvided?: boolean } = {},
): ServiceConfig {
  const values = parse(sharedSchema, env);
  const network = networkWithAddresses(values);
  const problems: string[] = [];
  if (!values.PAY_TO) problems.push("PAY_TO: required: the address that receives payments");
  if (!values.FACILITATOR_URL && !options.facilitatorProvided) {
    problems.push(
      "FACILITATOR_URL: required: the x402 facilitator that verifies and settles payments (or CHAIN_RPC_URL and FACILITATOR_PRIVATE_KEY for the built-in one)",
    );
  }
  if (network.usdc.addressFromConfiguration && !values.USDC_ADDRESS) {
    problems.push(`USDC_ADDRESS: required on ${network.id}: the USDC contract address`);
  }
  // Networks that price gas into quotes read the gas price from the chain.
  if (network.settlementGas && !values.CHAIN_RPC_URL) {
    problems.push(`CHAIN_RPC_URL: required on ${network.id}: quotes include the live gas price read from it`);
  }
  const catalog = collect(problems, () => catalogFrom(values, env, true));
  if (problems.length > 0 || !catalog) throw new ConfigurationError(problems);
  return {
    network,
    chainRpcUrl: values.CHAIN_RPC_URL,
    publicBaseUrl: values.PUBLIC_BASE_URL,
    payTo: values.PAY_TO as string,
    facilitatorUrl: values.FACILITATOR_URL ?? "",
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    catalog,
    providers: {
      timeoutMs: values.UPSTREAM_TIMEOUT_MS,
      failureThreshold: values.PROVIDER_FAILURE_THRESHOLD,
      cooldownMs: values.PROVIDER_COOLDOWN_SECONDS * 1000,
    },
    trustedProxies: { addresses: values.TRUSTED_PROXIES, header: values.TRUSTED_PROXY_HEADER },
    decisionModelVersion: values.DECISION_MODEL_VERSION,
    prepaid: {
      apiBase: values.PREPAID_API_BASE,
      reservationTtlMs: values.PREPAID_RESERVATION_TTL_SECONDS * 1000,
    },
    databaseUrl: values.DATABASE_URL,
    databasePoolSize: values.DATABASE_POOL_SIZE,
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
    metricsToken: values.METRICS_TOKEN,
    reconcileIntervalMs: values.RECONCILE_INTERVAL_SECONDS * 1000,
    paymentIdTtlMs: values.PAYMENT_ID_TTL_SECONDS * 1000,
    corsOrigins: values.CORS_ORIGINS,
  };
}

/** The chain a deployment's payments are read from: CHAIN_RPC_URL, else the network's public RPC. */
export function chainRpcUrlOf(config: Pick<ServiceConfig, "network" | "chainRpcUrl">): string {
  return config.chainRpcUrl ?? config.network.defaultRpcUrl;
}

/** What `paysvc ledger` reads of a deployment's configuration, from the same variables as the app. */
export interface LedgerConfig {
  network: NetworkDefinition;
  databaseUrl: string;
}

export function loadLedgerConfig(env: Environment = process.env): LedgerConfig {
  const values = parse(sharedSchema.pick({ NETWORK: true, DATABASE_URL: true }), env);
  return { network: getNetwork(values.NETWORK), databaseUrl: values.DATABASE_URL };
}

/** What `paysvc ledger reconcile` reads besides the ledger: the chain, the facilitator, the payment timeout. */
export interface ReconcileConfig extends LedgerConfig {
  chainRpcUrl: string;
  facilitatorUrl: string;
  facilitatorTimeoutMs: number;
  paymentTimeoutSeconds: number;
}

/** From the app's variables: the facilitator settles; the chain is CHAIN_RPC_URL, else the network's public RPC. */
export function loadReconcileConfig(env: Environment = process.env): ReconcileConfig {
  const values = parse(sharedSchema, env);
  const network = networkWithAddresses(values);
  if (!values.FACILITATOR_URL) {
    throw new ConfigurationError([
      values.CHAIN_RPC_URL
        ? "FACILITATOR_URL: required with CHAIN_RPC_URL, to settle what can still be"
        : "FACILITATOR_URL: required, to settle what can still be (with `npm start`: http://127.0.0.1:4020, and CHAIN_RPC_URL=http://127.0.0.1:8545)",
    ]);
  }
  return {
    network,
    databaseUrl: values.DATABASE_URL,
    chainRpcUrl: chainRpcUrlOf({ network, chainRpcUrl: values.CHAIN_RPC_URL }),
    facilitatorUrl: values.FACILITATOR_URL,
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
  };
}

/** The environment of a child process: ours, with the given variables set. */
export function childEnvironment(overrides: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return { ...Object.fromEntries(inherited), ...overrides };
}
