import { privateKeyProblem, type NetworkDefinition } from "../networks";
import { decimalToAtomic } from "../server/core/money";

/** x402 `batch-settlement` channels, as this deployment offers them (EVM networks only). */
export interface ChannelSettings {
  /** The key that signs the channels' claims and refunds: their `receiverAuthorizer`. It sends no transaction. */
  authorizerKey: `0x${string}`;
  /** How long a payer who leaves a channel waits for its deposit: the time the deployment has to claim. */
  withdrawDelaySeconds: number;
  /** When the charges not yet claimed are claimed (and the claimed sum sent to the pay-to). */
  claims: {
    /** Every so often, whatever the amount. */
    intervalMs: number;
    /** Sooner, once the charges not claimed add up to this (atomic units). */
    thresholdAtomic: bigint;
    /** How often the amount and the payers' withdrawals (read from the chain) are looked at. */
    checkMs: number;
  };
}

/** The contract's bounds on `withdrawDelay`: 15 minutes to 30 days. */
export const WITHDRAW_DELAY_SECONDS = { min: 900, max: 2_592_000 } as const;

/**
 * The channels a deployment offers: with X402_CHANNELS on (the default) and CHANNEL_AUTHORIZER_PRIVATE_KEY set, on
 * an EVM network; undefined otherwise. A malformed key or delay is a problem named by its variable.
 */
export function channelSettings(
  values: {
    X402_CHANNELS: boolean;
    CHANNEL_AUTHORIZER_PRIVATE_KEY?: string;
    CHANNEL_WITHDRAW_DELAY_SECONDS: number;
    CHANNEL_CLAIM_INTERVAL_SECONDS: number;
    CHANNEL_CLAIM_THRESHOLD_USD: string;
    CHANNEL_CHECK_SECONDS: number;
  },
  network: NetworkDefinition,
  problems: string[],
): ChannelSettings | undefined {
  const key = values.CHANNEL_AUTHORIZER_PRIVATE_KEY;
  const delay = values.CHANNEL_WITHDRAW_DELAY_SECONDS;
  if (delay < WITHDRAW_DELAY_SECONDS.min || delay > WITHDRAW_DELAY_SECONDS.max) {
    problems.push(
      `CHANNEL_WITHDRAW_DELAY_SECONDS: must be between ${WITHDRAW_DELAY_SECONDS.min} (15 minutes) and ${WITHDRAW_DELAY_SECONDS.max} (30 days), the channel contract's bounds`,
    );
  }
  if (values.CHANNEL_CLAIM_INTERVAL_SECONDS * 2 > delay) {
    problems.push(
      `CHANNEL_CLAIM_INTERVAL_SECONDS: at most half of CHANNEL_WITHDRAW_DELAY_SECONDS (${delay}): a payer who leaves a channel takes what was not claimed by then`,
    );
  }
  let thresholdAtomic = 0n;
  try {
    thresholdAtomic = decimalToAtomic(values.CHANNEL_CLAIM_THRESHOLD_USD, network.usdc.decimals);
  } catch {
    problems.push("CHANNEL_CLAIM_THRESHOLD_USD: must be an amount of USD, such as 1 or 0.25");
  }
  if (!values.X402_CHANNELS || network.kind !== "evm" || key === undefined) return undefined;
  const problem = privateKeyProblem(network, key);
  if (problem) {
    problems.push(`CHANNEL_AUTHORIZER_PRIVATE_KEY: ${problem}`);
    return undefined;
  }
  return {
    authorizerKey: key as `0x${string}`,
    withdrawDelaySeconds: delay,
    claims: {
      intervalMs: values.CHANNEL_CLAIM_INTERVAL_SECONDS * 1000,
      thresholdAtomic,
      checkMs: values.CHANNEL_CHECK_SECONDS * 1000,
    },
  };
}
