import { z } from "zod";
import { privateKeyProblem } from "../networks";
import { collectProblems } from "./configuration-error";
import { databaseLocation, isTransientDatabase } from "./database-url";
import { ConfigurationError, networkWithAddresses, parse, port, sharedSchema, type Environment } from "./env";
import { loadFacilitators } from "./facilitators";
import { publicAddressProblem, publicKeyProblem } from "./public-dev-accounts";
import { loadServiceConfig, type ServiceConfig } from "./service-config";

/** The service's variables, and where `paysvc start` listens and what key its built-in facilitator pays with. */
export const startSchema = sharedSchema.extend({
  PORT: port(3000),
  HOST: z.string().default("127.0.0.1"),
  FACILITATOR_PRIVATE_KEY: z.string().trim().optional(),
});

/** The facilitator `paysvc start` runs itself, on a real chain, when no FACILITATOR_URL is given. */
export interface BuiltInFacilitator {
  rpcUrl: string;
  /** EVM: 0x + 64 hex digits. Solana: a 64-byte keypair in base58, as wallets export it. */
  privateKey: string;
  /** The deployment's PAY_TO: the only recipient whose payments it verifies and settles. */
  payTo: string;
}

export interface StartConfig {
  /** The app's configuration; the built-in facilitator's entry has no URL until it runs (`builtInFacilitator`). */
  service: ServiceConfig;
  host: string;
  port: number;
  /** PAYSVC_CATALOG as read (absolute when run through the CLI); undefined: the spec's tables. */
  catalogFile: string | undefined;
  builtInFacilitator?: BuiltInFacilitator;
}

/**
 * Production: every piece is the operator's, nothing is embedded. Refused with one line per missing or wrong piece:
 * a pay-to, a facilitator (FACILITATORS, FACILITATOR_URL, or CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY, each with good
 * credentials), a provider for every model
 * of the catalog (and every key its routes name), and a database set explicitly that outlives the process. The
 * development world's public accounts are refused as the pay-to and the facilitator's key.
 */
export function loadStartConfig(env: Environment = process.env): StartConfig {
  const values = parse(startSchema, env);
  const problems: string[] = [];
  const facilitators = collectProblems([], () => loadFacilitators(env)) ?? [];
  const listed = Boolean(env.FACILITATORS?.trim() || values.FACILITATOR_URL);
  // The built-in facilitator: listed as `built-in`, or the one facilitator where CHAIN_RPC_URL is set alone.
  const builtInWanted = facilitators.some((entry) => entry.builtIn && !entry.url) || (!listed && values.CHAIN_RPC_URL);
  if (builtInWanted && !values.CHAIN_RPC_URL) {
    problems.push(
      "CHAIN_RPC_URL: required by the built-in facilitator (FACILITATORS lists built-in): the chain it settles on",
    );
  }
  if (builtInWanted && !values.FACILITATOR_PRIVATE_KEY) {
    problems.push(
      listed
        ? "FACILITATOR_PRIVATE_KEY: required by the built-in facilitator (FACILITATORS lists built-in): it pays settlement fees with it"
        : "FACILITATOR_PRIVATE_KEY: required with CHAIN_RPC_URL when FACILITATOR_URL is not set: the built-in facilitator pays settlement fees with it",
    );
  }
  if (values.FACILITATOR_PRIVATE_KEY) {
    const problem = privateKeyProblem(networkWithAddresses(values), values.FACILITATOR_PRIVATE_KEY);
    if (problem) problems.push(`FACILITATOR_PRIVATE_KEY: ${problem}`);
    else {
      const publicKey = publicKeyProblem("FACILITATOR_PRIVATE_KEY", values.FACILITATOR_PRIVATE_KEY);
      if (publicKey) problems.push(publicKey);
    }
  }
  // The development world's accounts are public: what is paid to them, or their gas, is anyone's.
  const publicPayTo = values.PAY_TO && publicAddressProblem("PAY_TO", values.PAY_TO);
  if (publicPayTo) problems.push(publicPayTo);
  if (!env.DATABASE_URL?.trim()) {
    problems.push(
      "DATABASE_URL: required: where payments and prepaid keys are kept (file:/var/lib/paysvc/paysvc.sqlite, or postgres://user:password@host:5432/paysvc)",
    );
  } else if (isTransientDatabase(databaseLocation(values.DATABASE_URL))) {
    problems.push(
      `DATABASE_URL: ${values.DATABASE_URL.trim()} is an in-memory SQLite database, lost when the process stops, and the ledger of payments and prepaid keys must survive a restart; set a file (file:/var/lib/paysvc/paysvc.sqlite) or postgres:// URL`,
    );
  }
  const service = collectProblems(problems, () =>
    loadServiceConfig(env, { facilitatorProvided: Boolean(builtInWanted) }),
  );
  if (problems.length > 0 || !service) throw new ConfigurationError(problems);
  return {
    service,
    host: values.HOST,
    port: values.PORT,
    catalogFile: values.PAYSVC_CATALOG,
    builtInFacilitator:
      builtInWanted && values.CHAIN_RPC_URL && values.FACILITATOR_PRIVATE_KEY
        ? { rpcUrl: values.CHAIN_RPC_URL, privateKey: values.FACILITATOR_PRIVATE_KEY, payTo: service.payTo }
        : undefined,
  };
}
