import { getNetwork, type NetworkDefinition } from "../networks";
import { ConfigurationError, type Environment } from "./configuration-error";
import { networkWithAddresses, parse, sharedSchema } from "./env";
import { chainRpcUrlOf } from "./service-config";

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
