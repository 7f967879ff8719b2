import { BatchSettlementEvmScheme, type ChannelStorage } from "@x402/evm/batch-settlement/server";
import { privateKeyToAccount } from "viem/accounts";
import type { ChannelSettings } from "../../config/channels";

/**
 * The deployment's one `batch-settlement` scheme (@x402/evm): every facilitator route registers this instance, for
 * it keeps each request's state per payment payload, over the database's channel storage (shared by every
 * instance), with the deployment's own key as the channels' receiverAuthorizer, so that any facilitator can relay
 * its claims and refunds and none can sign them.
 */
export function channelScheme(
  payTo: string,
  settings: ChannelSettings,
  storage: ChannelStorage,
): BatchSettlementEvmScheme {
  const authorizer = privateKeyToAccount(settings.authorizerKey);
  return new BatchSettlementEvmScheme(payTo as `0x${string}`, {
    storage,
    receiverAuthorizerSigner: {
      address: authorizer.address,
      signTypedData: (message) => authorizer.signTypedData(message as Parameters<typeof authorizer.signTypedData>[0]),
    },
    withdrawDelay: settings.withdrawDelaySeconds,
  });
}
