import { getNetwork, privateKeyProblem, type NetworkDefinition } from "../networks";
import { ConfigurationError, type Environment } from "./configuration-error";
import { EMBEDDED_CHAIN_URL, EMBEDDED_FACILITATOR_URL } from "./embedded-stack";
import { networkWithAddresses, parse, sharedSchema } from "./env";
import { chainRpcUrlOf } from "./service-config";
import { startSchema, type BuiltInFacilitator } from "./start-config";

/** What `paysvc ledger` reads of a deployment's configuration, from the same variables as the app. */
export interface LedgerConfig {
  network: NetworkDefinition;
  databaseUrl: string;
}

export function loadLedgerConfig(env: Environment = process.env): LedgerConfig {
  const values = parse(sharedSchema.pick({ NETWORK: true, DATABASE_URL: true }), env);
  return { network: getNetwork(values.NETWORK), databaseUrl: values.DATABASE_URL };
}

/**
 * Who settles what reconciliation finds delivered and still valid: a facilitator at a URL, or the built-in one
 * (`paysvc start`'s, on CHAIN_RPC_URL, paying from FACILITATOR_PRIVATE_KEY) started for the run.
 */
export type ReconcileFacilitator = { url: string } | { builtIn: BuiltInFacilitator };

/** What `paysvc ledger reconcile` reads besides the ledger: the chain, the facilitator, the payment timeout. */
export interface ReconcileConfig extends LedgerConfig {
  chainRpcUrl: string;
  /** Undefined only for a check (`--check` settles nothing) of a deployment whose facilitator is not configured. */
  facilitator: ReconcileFacilitator | undefined;
  /** The chain and facilitator are the embedded stack's (neither CHAIN_RPC_URL nor FACILITATOR_URL is set). */
  embeddedStack: boolean;
  facilitatorTimeoutMs: number;
  paymentTimeoutSeconds: number;
}

const reconcileSchema = sharedSchema.extend({ FACILITATOR_PRIVATE_KEY: startSchema.shape.FACILITATOR_PRIVATE_KEY });

/**
 * From the app's variables, as the deployment runs: FACILITATOR_URL settles, or, without it, CHAIN_RPC_URL +
 * FACILITATOR_PRIVATE_KEY name the built-in facilitator; the chain is CHAIN_RPC_URL, else the network's public RPC.
 * With neither CHAIN_RPC_URL nor FACILITATOR_URL, the embedded stack of `npm start` at its default local URLs.
 * `check`: nothing will be settled, so no facilitator is required.
 */
export function loadReconcileConfig(
  env: Environment = process.env,
  options: { check?: boolean } = {},
): ReconcileConfig {
  const values = parse(reconcileSchema, env);
  const network = networkWithAddresses(values);
  const embeddedStack = !values.CHAIN_RPC_URL && !values.FACILITATOR_URL;
  return {
    network,
    databaseUrl: values.DATABASE_URL,
    chainRpcUrl: embeddedStack ? EMBEDDED_CHAIN_URL : chainRpcUrlOf({ network, chainRpcUrl: values.CHAIN_RPC_URL }),
    facilitator: embeddedStack ? { url: EMBEDDED_FACILITATOR_URL } : facilitatorOf(values, network, options.check),
    embeddedStack,
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
  };
}

function facilitatorOf(
  values: { FACILITATOR_URL?: string; CHAIN_RPC_URL?: string; FACILITATOR_PRIVATE_KEY?: string },
  network: NetworkDefinition,
  check = false,
): ReconcileFacilitator | undefined {
  if (values.FACILITATOR_URL) return { url: values.FACILITATOR_URL };
  const rpcUrl = values.CHAIN_RPC_URL as string;
  if (values.FACILITATOR_PRIVATE_KEY) {
    const problem = privateKeyProblem(network, values.FACILITATOR_PRIVATE_KEY);
    if (problem) throw new ConfigurationError([`FACILITATOR_PRIVATE_KEY: ${problem}`]);
    return { builtIn: { rpcUrl, privateKey: values.FACILITATOR_PRIVATE_KEY } };
  }
  if (check) return undefined;
  throw new ConfigurationError([
    "FACILITATOR_URL: required with CHAIN_RPC_URL, to settle what can still be; or FACILITATOR_PRIVATE_KEY, to settle through the built-in facilitator on CHAIN_RPC_URL (as `paysvc start` does); --check settles nothing and needs neither",
  ]);
}
