import { z } from "zod";
import { addressProblem, getNetwork, networkIds } from "../networks";
import { databaseLocation, DatabaseUrlError } from "./database-url";
import { DEFAULT_DECISION_MODEL_VERSION } from "./decision-model";
import { parseAddressRange } from "./address-range";
import { corsOriginsSchema } from "./cors-origins";
import { ConfigurationError, type Environment } from "./configuration-error";

export { ConfigurationError } from "./configuration-error";
export type { Environment } from "./configuration-error";

/**
 * The service's environment variables and how they are read; each job's loader (service-config.ts, ledger-config.ts,
 * start-config.ts, dev-launch-config.ts, mcp-env.ts) builds on them. config/ is the only reader of process.env.
 */

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
  // The chain's RPC that the console gives a browser wallet adding the chain (public: every visitor sees it).
  WALLET_RPC_URL: optionalUrl,
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
  // Requests one caller (an IPv6 one by its /64) may have under way at once on the routes that call a provider, in
  // one process: a quarter of the 256 connections the process keeps open to each provider (0: not counted).
  PROVIDER_CALLS_PER_ADDRESS: nonNegativeInteger(64),
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
  // The free embeddings' windows per caller (an IPv6 caller by its /64); 0 turns a window off.
  FREE_EMBEDDINGS_PER_10_MIN: nonNegativeInteger(60),
  FREE_EMBEDDINGS_PER_DAY: nonNegativeInteger(600),
  // Input tokens one free embeddings request may carry, all its strings together (at most 128 strings).
  FREE_EMBEDDINGS_MAX_INPUT_TOKENS: positiveInteger(16_384),
  // How fast one prepaid key and one paying wallet may go, on every instance together; 0 turns a limit off.
  RATE_LIMIT_KEY_RPM: nonNegativeInteger(600),
  RATE_LIMIT_KEY_TPM: nonNegativeInteger(0),
  RATE_LIMIT_KEY_CONCURRENT: nonNegativeInteger(32),
  RATE_LIMIT_WALLET_RPM: nonNegativeInteger(600),
  RATE_LIMIT_WALLET_CONCURRENT: nonNegativeInteger(32),
  // Unpaid quotes (402s) one caller address may ask of one instance per minute; 0 turns it off.
  RATE_LIMIT_QUOTE_RPM: nonNegativeInteger(1200),
  PREPAID_API_BASE: optionalUrl,
  // A lease, renewed every third of it while the call runs: a dead process's reservations stop counting within it.
  PREPAID_RESERVATION_TTL_SECONDS: positiveInteger(30),
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
  // How long a request waits for the database (a connection, then each statement) before it is answered 503.
  DATABASE_TIMEOUT_SECONDS: positiveInteger(10),
  UPSTREAM_TIMEOUT_MS: positiveInteger(120_000),
  FACILITATOR_TIMEOUT_MS: positiveInteger(30_000),
  // A facilitator that fails this many calls in a row is skipped for the cooldown, then tried again with one call.
  FACILITATOR_FAILURE_THRESHOLD: positiveInteger(3),
  FACILITATOR_COOLDOWN_SECONDS: positiveInteger(30),
  // How long /health reuses a dependency's probe: a flood of /health asks each facilitator and provider once.
  HEALTH_PROBE_SECONDS: positiveInteger(5),
  PAYMENT_TIMEOUT_SECONDS: positiveInteger(300),
  // How long a process given SIGTERM lets the requests and streams under way finish before it cuts them.
  SHUTDOWN_GRACE_SECONDS: positiveInteger(30),
  // Open connections at most, in all and from one address (an IPv6 one by its /64; a trusted proxy's are exempt).
  MAX_CONNECTIONS: positiveInteger(8192),
  MAX_CONNECTIONS_PER_ADDRESS: positiveInteger(256),
  // How long a request's headers, and the whole request (its body), may take to arrive before it is answered 408.
  HEADERS_TIMEOUT_SECONDS: positiveInteger(20),
  REQUEST_TIMEOUT_SECONDS: positiveInteger(300),
  // How long a streamed answer waits for a caller that reads none of it before it is cut (billed what it passed on).
  STREAM_STALL_SECONDS: positiveInteger(30),
  // Whether chat and Responses 402s also offer x402 `upto` (charged the tokens used), where the facilitator settles it.
  X402_UPTO: z
    .string()
    .trim()
    .toLowerCase()
    .default("on")
    .pipe(z.enum(["on", "off"], { error: "must be on or off" }))
    .transform((value) => value === "on"),
  // Whether 402s also offer x402 `batch-settlement` channels (EVM), where the facilitator lists the scheme and
  // CHANNEL_AUTHORIZER_PRIVATE_KEY is set.
  X402_CHANNELS: z
    .string()
    .trim()
    .toLowerCase()
    .default("on")
    .pipe(z.enum(["on", "off"], { error: "must be on or off" }))
    .transform((value) => value === "on"),
  // The key that signs the channels' claims and refunds (their receiverAuthorizer); it never sends a transaction.
  CHANNEL_AUTHORIZER_PRIVATE_KEY: z.string().trim().optional(),
  // How long a payer leaving a channel waits for its deposit: the deployment's time to claim what was charged.
  CHANNEL_WITHDRAW_DELAY_SECONDS: positiveInteger(86_400),
  // Charges not claimed yet are claimed this often, or sooner once they add up to CHANNEL_CLAIM_THRESHOLD_USD.
  CHANNEL_CLAIM_INTERVAL_SECONDS: positiveInteger(3600),
  CHANNEL_CLAIM_THRESHOLD_USD: z.string().trim().default("1"),
  // How often the unclaimed sum and the payers' withdrawals (on chain) are looked at.
  CHANNEL_CHECK_SECONDS: positiveInteger(30),
  // `overlap`: the facilitator verifies while the upstream starts, and a stream is passed on while it settles;
  // `strict`: verify, the work, settle, then the answer.
  SETTLEMENT_ORDER: z
    .string()
    .trim()
    .toLowerCase()
    .default("overlap")
    .pipe(z.enum(["overlap", "strict"], { error: "must be overlap or strict" })),
  // How long a payer whose streamed answer went unpaid (its settlement refused) is served in strict order.
  SETTLEMENT_STRICT_SECONDS: positiveInteger(86_400),
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
  // The operator's page (/operator) signs in with it; unset: no page (404). Longer: it opens the ledger's figures.
  OPERATOR_TOKEN: z
    .string()
    .trim()
    .regex(
      /^[\x21-\x7e]{32,}$/,
      "must be at least 32 printable characters without spaces, such as `openssl rand -hex 24`",
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

/** The environment of a child process: ours, with the given variables set. */
export function childEnvironment(overrides: Record<string, string>): Record<string, string> {
  const inherited = Object.entries(process.env).filter((entry): entry is [string, string] => entry[1] !== undefined);
  return { ...Object.fromEntries(inherited), ...overrides };
}
