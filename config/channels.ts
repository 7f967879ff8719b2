import { privateKeyProblem, type NetworkDefinition } from "../networks";

/** x402 `batch-settlement` channels, as this deployment offers them (EVM networks only). */
export interface ChannelSettings {
  /** The key that signs the channels' claims and refunds: their `receiverAuthorizer`. It sends no transaction. */
  authorizerKey: `0x${string}`;
  /** How long a payer who leaves a channel waits for its deposit: the time the deployment has to claim. */
  withdrawDelaySeconds: number;
}

/** The contract's bounds on `withdrawDelay`: 15 minutes to 30 days. */
export const WITHDRAW_DELAY_SECONDS = { min: 900, max: 2_592_000 } as const;

/**
 * The channels a deployment offers: with X402_CHANNELS on (the default) and CHANNEL_AUTHORIZER_PRIVATE_KEY set, on
 * an EVM network; undefined otherwise. A malformed key or delay is a problem named by its variable.
 */
export function channelSettings(
  values: { X402_CHANNELS: boolean; CHANNEL_AUTHORIZER_PRIVATE_KEY?: string; CHANNEL_WITHDRAW_DELAY_SECONDS: number },
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
  if (!values.X402_CHANNELS || network.kind !== "evm" || key === undefined) return undefined;
  const problem = privateKeyProblem(network, key);
  if (problem) {
    problems.push(`CHANNEL_AUTHORIZER_PRIVATE_KEY: ${problem}`);
    return undefined;
  }
  return { authorizerKey: key as `0x${string}`, withdrawDelaySeconds: delay };
}
