import { getNetwork, privateKeyProblem, type NetworkDefinition } from "../networks";
import { ConfigurationError, type Environment } from "./configuration-error";
import { EMBEDDED_CHAIN_URL, EMBEDDED_FACILITATOR_URL } from "./embedded-stack";
import { networkWithAddresses, parse, sharedSchema } from "./env";
import { loadFacilitators, SINGLE_FACILITATOR, type FacilitatorEntry } from "./facilitators";
import { chainRpcUrlOf } from "./service-config";
import { startSchema, type BuiltInFacilitator } from "./start-config";
import { channelSettings, type ChannelSettings } from "./channels";

/** What `paysvc ledger` reads of a deployment's configuration, from the same variables as the app. */
export interface LedgerConfig {
  network: NetworkDefinition;
  databaseUrl: string;
}

export function loadLedgerConfig(env: Environment = process.env): LedgerConfig {
  const values = parse(sharedSchema.pick({ NETWORK: true, DATABASE_URL: true }), env);
  return { network: getNetwork(values.NETWORK), databaseUrl: values.DATABASE_URL };
}

/** What `paysvc ledger reconcile` reads besides the ledger: the chain, the facilitators, the payment timeout. */
export interface ReconcileConfig extends LedgerConfig {
  chainRpcUrl: string;
  /**
   * Who settles what reconciliation finds delivered and still valid, in the app's order; the built-in one's entry
   * has no URL until the command starts it (`builtIn`). Empty only for a check (`--check` settles nothing) of a
   * deployment whose facilitator is not configured.
   */
  facilitators: FacilitatorEntry[];
  builtIn: BuiltInFacilitator | undefined;
  /** The chain and facilitator are the embedded stack's (no CHAIN_RPC_URL, FACILITATOR_URL or FACILITATORS). */
  embeddedStack: boolean;
  facilitatorTimeoutMs: number;
  facilitatorBreaker: { failureThreshold: number; cooldownMs: number };
  paymentTimeoutSeconds: number;
  /** PAY_TO where the deployment offers channels (CHANNEL_AUTHORIZER_PRIVATE_KEY set, EVM): their receiver. */
  channelPayTo: string | undefined;
}

const reconcileSchema = sharedSchema.extend({ FACILITATOR_PRIVATE_KEY: startSchema.shape.FACILITATOR_PRIVATE_KEY });

/**
 * From the app's variables, as the deployment runs: FACILITATORS or FACILITATOR_URL settle, with their
 * credentials, or, without them, CHAIN_RPC_URL + FACILITATOR_PRIVATE_KEY name the built-in facilitator; the chain
 * is CHAIN_RPC_URL, else the network's public RPC. With none of CHAIN_RPC_URL, FACILITATOR_URL and FACILITATORS,
 * the embedded stack of `npm start` at its default local URLs. `check`: nothing will be settled, so no facilitator
 * is required.
 */
export function loadReconcileConfig(
  env: Environment = process.env,
  options: { check?: boolean } = {},
): ReconcileConfig {
  const values = parse(reconcileSchema, env);
  const network = networkWithAddresses(values);
  const embeddedStack = !values.CHAIN_RPC_URL && !values.FACILITATOR_URL && !env.FACILITATORS?.trim();
  const facilitators = embeddedStack
    ? [{ name: SINGLE_FACILITATOR, url: EMBEDDED_FACILITATOR_URL, builtIn: false, auth: { kind: "none" as const } }]
    : loadFacilitators(env);
  const wantsBuiltIn = facilitators.some((entry) => entry.builtIn && !entry.url);
  let builtIn: BuiltInFacilitator | undefined;
  if (wantsBuiltIn && values.FACILITATOR_PRIVATE_KEY && values.CHAIN_RPC_URL) {
    const problem = privateKeyProblem(network, values.FACILITATOR_PRIVATE_KEY);
    if (problem) throw new ConfigurationError([`FACILITATOR_PRIVATE_KEY: ${problem}`]);
    if (!values.PAY_TO) {
      throw new ConfigurationError([
        "PAY_TO: required by the built-in facilitator, which settles payments to the deployment's pay-to only",
      ]);
    }
    builtIn = { rpcUrl: values.CHAIN_RPC_URL, privateKey: values.FACILITATOR_PRIVATE_KEY, payTo: values.PAY_TO };
  } else if (wantsBuiltIn && !options.check) {
    throw new ConfigurationError([
      "FACILITATOR_PRIVATE_KEY: required with CHAIN_RPC_URL by the built-in facilitator (FACILITATORS lists built-in)",
    ]);
  }
  if (facilitators.length === 0 && !options.check) {
    throw new ConfigurationError([
      "FACILITATOR_URL: required with CHAIN_RPC_URL, to settle what can still be (or FACILITATORS; or FACILITATOR_PRIVATE_KEY, to settle through the built-in facilitator on CHAIN_RPC_URL, as `paysvc start` does); --check settles nothing and needs neither",
    ]);
  }
  return {
    network,
    databaseUrl: values.DATABASE_URL,
    chainRpcUrl: embeddedStack ? EMBEDDED_CHAIN_URL : chainRpcUrlOf({ network, chainRpcUrl: values.CHAIN_RPC_URL }),
    facilitators: builtIn || !wantsBuiltIn ? facilitators : facilitators.filter((entry) => !entry.builtIn),
    builtIn,
    embeddedStack,
    facilitatorTimeoutMs: values.FACILITATOR_TIMEOUT_MS,
    facilitatorBreaker: {
      failureThreshold: values.FACILITATOR_FAILURE_THRESHOLD,
      cooldownMs: values.FACILITATOR_COOLDOWN_SECONDS * 1000,
    },
    paymentTimeoutSeconds: values.PAYMENT_TIMEOUT_SECONDS,
    channelPayTo:
      values.X402_CHANNELS && values.CHANNEL_AUTHORIZER_PRIVATE_KEY && network.kind === "evm"
        ? values.PAY_TO
        : undefined,
  };
}

/** What `paysvc channels claim|refund` reads besides what reconciliation does: the channels' owner and authorizer. */
export interface ChannelClaimConfig extends ReconcileConfig {
  payTo: string;
  channels: ChannelSettings;
}

/**
 * The app's variables for claiming and refunding channels: those of reconciliation (the facilitators, the chain),
 * PAY_TO and CHANNEL_AUTHORIZER_PRIVATE_KEY (the channels' receiver and the key that signs their claims and
 * refunds), both required: without them there are no channels of this deployment to act on.
 */
export function loadChannelClaimConfig(env: Environment = process.env): ChannelClaimConfig {
  const base = loadReconcileConfig(env);
  const values = parse(reconcileSchema, env);
  const problems: string[] = [];
  if (!values.PAY_TO) problems.push("PAY_TO: required: the address the channels pay (the deployment's)");
  if (!values.CHANNEL_AUTHORIZER_PRIVATE_KEY) {
    problems.push("CHANNEL_AUTHORIZER_PRIVATE_KEY: required: the key that signs this deployment's claims and refunds");
  }
  const channels = channelSettings({ ...values, X402_CHANNELS: true }, base.network, problems);
  if (base.network.kind !== "evm") problems.push(`NETWORK: ${base.network.id} has no batch-settlement channels`);
  if (problems.length > 0 || !channels) throw new ConfigurationError(problems);
  return { ...base, payTo: values.PAY_TO!, channels };
}
