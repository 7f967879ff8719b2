import { z } from "zod";
import { privateKeyProblem, type NetworkDefinition } from "../networks";
import { EMBEDDED_CHAIN_PORT, EMBEDDED_FACILITATOR_PORT } from "./embedded-stack";
import { ConfigurationError, networkWithAddresses, parse, port, type Environment } from "./env";
import { startSchema } from "./start-config";

/**
 * The development world's settings (`paysvc dev`, the tests, the benchmark): where its embedded pieces listen and
 * keep their data. Production code never reads them.
 */
const launchSchema = startSchema.extend({
  LOCAL_CHAIN_PORT: port(EMBEDDED_CHAIN_PORT),
  LOCAL_FACILITATOR_PORT: port(EMBEDDED_FACILITATOR_PORT),
  LOCAL_UPSTREAM_PORT: port(4010),
  LOCAL_POSTGRES_PORT: port(5433),
  DATA_DIR: z.string().default("./data"),
});

/** Configuration of `paysvc dev`: which pieces are configured, and which the embedded stack provides. */
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
