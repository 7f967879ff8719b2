import { z } from "zod";
import { addressProblem, getNetwork, networkIds, privateKeyProblem, type NetworkDefinition } from "../networks";
import { databaseLocation, DatabaseUrlError } from "./database-url";
import { decisionModel } from "./decision-model";
import { parseAddressRange } from "./address-range";
import { corsOriginsSchema, type CorsOrigins } from "./cors-origins";

/** The only module that reads process.env: everything else receives validated configuration. */
type Environment = Record<string, string | undefined>;

const port = (fallback: number) =>
  z.coerce
    .number({ error: "must be a port number" })
    .int("must be a whole number")
    .min(0, "must be 0 to 65535 (0 picks a free port)")
    .max(65535, "must be 0 to 65535")
    .default(fallback);

const optionalUrl = z
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
function withoutEmpty(env: Environment): Environment {
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

const sharedSchema = z.object({
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
    .default(decisionModel.defaultVersion),
  EMBEDDINGS_UPSTREAM_BASE_URL: optionalUrl,
  EMBEDDINGS_UPSTREAM_API_KEY: z.string().optional(),
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

const launchSchema = sharedSchema.extend({
  PORT: port(3000),
  HOST: z.string().default("127.0.0.1"),
  FACILITATOR_PRIVATE_KEY: z.string().trim().optional(),
  LOCAL_CHAIN_PORT: port(8545),
  LOCAL_FACILITATOR_PORT: port(4020),
  LOCAL_UPSTREAM_PORT: port(4010),
  LOCAL_POSTGRES_PORT: port(5433),
  DATA_DIR: z.string().default("./data"),
});

export class ConfigurationError extends Error {
  constructor(public readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join("\n")}`);
    this.name = "ConfigurationError";
  }
}

function parse<T extends z.ZodType>(schema: T, env: Environment): z.output<T> {
  const result = schema.safeParse(withoutEmpty(env));
  if (result.success) return result.data;
  throw new ConfigurationError(
    result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}. Set it in the environment.`),
  );
}

/** The network, and the address-shaped values checked against its address format (EVM checksum, base58). */
function networkWithAddresses(values: { NETWORK: string; PAY_TO?: string; USDC_ADDRESS?: string }) {
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

export interface UpstreamSettings {
  baseUrl: string;
  apiKey: string | undefined;
  timeoutMs: number;
}

/** Configuration of the HTTP service itself (the Next.js app). Every piece must be present. */
export interface ServiceConfig {
  network: NetworkDefinition;
  /** The chain's RPC, for networks whose quotes include a live gas estimate. */
  chainRpcUrl: string | undefined;
  publicBaseUrl: string | undefined;
  payTo: string;
  facilitatorUrl: string;
  facilitatorTimeoutMs: number;
  /** OpenAI-compatible provider of chat completions. */
  upstream: UpstreamSettings;
  /** OpenAI-compatible images API (generations, edits); the chat provider unless configured apart. */
  imageUpstream: UpstreamSettings;
  /** OpenAI-compatible embeddings API; the chat provider unless configured apart. */
  embeddingsUpstream: UpstreamSettings;
  /** Proxies whose forwarded header is believed; everyone else is identified by the socket's address. */
  trustedProxies: TrustedProxies;
  /** Provider of structured decisions (POST /decisions); the chat provider unless configured apart. */
  decisionUpstream: UpstreamSettings;
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

export function loadServiceConfig(env: Environment = process.env): ServiceConfig {
  const values = parse(sharedSchema, env);
  const network = networkWithAddresses(values);
  const missing: (keyof typeof values)[] = (["PAY_TO", "FACILITATOR_URL", "UPSTREAM_BASE_URL"] as const).filter(
    (name) => !values[name],
  );
  if (network.usdc.addressFromConfiguration && !values.USDC_ADDRESS) missing.push("USDC_ADDRESS");
  // Networks that price gas into quotes read the gas price from the chain.
  if (network.settlementGas && !values.CHAIN_RPC_URL) missing.push("CHAIN_RPC_URL");
  if (missing.length > 0) {
    throw new ConfigurationError(
      missing.map(
        (name) => `${name}: required by the service; start it with \`npm start\` to use the embedded default`,
      ),
    );
  }
  const chat: UpstreamSettings = {
    baseUrl: values.UPSTREAM_BASE_URL as string,
    apiKey: values.UPSTREAM_API_KEY,
    timeoutMs: values.UPSTREAM_TIMEOUT_MS,
  };
  // A provider configured apart uses its own key; otherwise the chat provider serves it, with the chat key.
  const apart = (baseUrl: string | undefined, apiKey: string | undefined): UpstreamSettings =>
    baseUrl ? { ...chat, baseUrl, apiKey } : chat;
  return {
    network,
    chainRpcUrl: values.CHAIN_RPC_URL,
    publicBaseUrl: values.PUBLIC_BASE_URL,
    payTo: values.PAY_TO as string,
    facilitatorUrl: values.FACILITATOR_URL as string,
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    upstream: chat,
    imageUpstream: apart(values.IMAGE_UPSTREAM_BASE_URL, values.IMAGE_UPSTREAM_API_KEY),
    embeddingsUpstream: apart(values.EMBEDDINGS_UPSTREAM_BASE_URL, values.EMBEDDINGS_UPSTREAM_API_KEY),
    decisionUpstream: apart(values.DECISION_UPSTREAM_BASE_URL, values.DECISION_UPSTREAM_API_KEY),
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

/**
 * From the app's variables. Neither CHAIN_RPC_URL nor FACILITATOR_URL set means the embedded stack of `npm
 * start`, on its local ports; a facilitator without a chain is read from the network's public RPC.
 */
export function loadReconcileConfig(env: Environment = process.env): ReconcileConfig {
  const values = parse(launchSchema, env);
  const network = networkWithAddresses(values);
  const local = (port: number) => `http://127.0.0.1:${port}`;
  const embedded = !values.CHAIN_RPC_URL && !values.FACILITATOR_URL;
  if (!embedded && !values.FACILITATOR_URL) {
    throw new ConfigurationError(["FACILITATOR_URL: required with CHAIN_RPC_URL, to settle what can still be"]);
  }
  return {
    network,
    databaseUrl: values.DATABASE_URL,
    chainRpcUrl: embedded
      ? local(values.LOCAL_CHAIN_PORT)
      : chainRpcUrlOf({ network, chainRpcUrl: values.CHAIN_RPC_URL }),
    facilitatorUrl: values.FACILITATOR_URL ?? local(values.LOCAL_FACILITATOR_PORT),
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
  };
}

/** Configuration of `paysvc start`: which pieces are configured, and which the embedded stack provides. */
export interface LaunchConfig {
  network: NetworkDefinition;
  host: string;
  port: number;
  dataDir: string;
  configured: {
    publicBaseUrl?: string;
    payTo?: string;
    facilitatorUrl?: string;
    chainRpcUrl?: string;
    /** EVM: 0x + 64 hex digits. Solana: a 64-byte keypair in base58, as wallets export it. */
    facilitatorPrivateKey?: string;
    upstreamBaseUrl?: string;
    upstreamApiKey?: string;
    databaseUrl: string;
    /** Whether DATABASE_URL was set, rather than defaulted. */
    databaseUrlSet: boolean;
  };
  localPorts: { chain: number; facilitator: number; upstream: number; postgres: number };
}

export function loadLaunchConfig(env: Environment = process.env): LaunchConfig {
  const values = parse(launchSchema, env);
  const problems: string[] = [];
  if (values.CHAIN_RPC_URL && !values.FACILITATOR_URL && !values.FACILITATOR_PRIVATE_KEY) {
    problems.push(
      "FACILITATOR_PRIVATE_KEY: required when CHAIN_RPC_URL is set without FACILITATOR_URL, so the embedded facilitator can pay gas on that chain",
    );
  }
  if ((values.CHAIN_RPC_URL || values.FACILITATOR_URL) && !values.PAY_TO) {
    problems.push(
      "PAY_TO: required when the chain or facilitator is not embedded; set the address that receives payments",
    );
  }
  const network = networkWithAddresses(values);
  const keyProblem = values.FACILITATOR_PRIVATE_KEY && privateKeyProblem(network, values.FACILITATOR_PRIVATE_KEY);
  if (keyProblem) problems.push(`FACILITATOR_PRIVATE_KEY: ${keyProblem}`);
  const chainEmbedded = !values.CHAIN_RPC_URL && !values.FACILITATOR_URL;
  if (network.usdc.addressFromConfiguration && !values.USDC_ADDRESS && !chainEmbedded) {
    problems.push(
      `USDC_ADDRESS: required on ${network.id} unless the chain is embedded; set the USDC contract address`,
    );
  }
  if (problems.length > 0) throw new ConfigurationError(problems);
  return {
    network,
    host: values.HOST,
    port: values.PORT,
    dataDir: values.DATA_DIR,
    configured: {
      publicBaseUrl: values.PUBLIC_BASE_URL,
      payTo: values.PAY_TO,
      facilitatorUrl: values.FACILITATOR_URL,
      chainRpcUrl: values.CHAIN_RPC_URL,
      facilitatorPrivateKey: values.FACILITATOR_PRIVATE_KEY,
      upstreamBaseUrl: values.UPSTREAM_BASE_URL,
      upstreamApiKey: values.UPSTREAM_API_KEY,
      databaseUrl: values.DATABASE_URL,
      databaseUrlSet: Boolean(env.DATABASE_URL),
    },
    localPorts: {
      chain: values.LOCAL_CHAIN_PORT,
      facilitator: values.LOCAL_FACILITATOR_PORT,
      upstream: values.LOCAL_UPSTREAM_PORT,
      postgres: values.LOCAL_POSTGRES_PORT,
    },
  };
}

/** Our environment with some variables replaced, for loading another deployment's configuration. */
export function environmentWith(overrides: Record<string, string>): Environment {
  return { ...process.env, ...overrides };
}

/** The environment of a child process: ours, with the given variables set. */
export function childEnvironment(overrides: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return { ...Object.fromEntries(inherited), ...overrides };
}
