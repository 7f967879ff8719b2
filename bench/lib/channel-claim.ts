// Claims the bench deployment's channels in this process, as `paysvc channels claim` does: its database, its
// facilitator, the development channel authorizer key the bench stack gave the app.
import { CHANNEL_AUTHORIZER_ACCOUNT_INDEX, devAccount } from "../../cli/dev-stack/dev-accounts";
import { headerAuth } from "../../cli/lib/facilitator-server";
import { polygon } from "../../networks/eip155-137";
import { chainRpcUrlOf } from "../../config/service-config";
import { claimChannels } from "../../server/channels/channel-claims";
import { ReceiverPayouts } from "../../server/channels/receiver-payouts";
import { channelScheme } from "../../server/payment/channel-scheme";
import { gatewayFor } from "../../server/payment/gateway-for";
import { DeferredWrites } from "../../server/lifecycle/deferred-writes";
import { openStorage } from "../../server/storage/open-storage";

export async function claimBenchChannels(stack: {
  databaseUrl: string;
  facilitatorUrl: string;
  facilitatorAuthHeader: string | undefined;
  payTo: string;
  chainRpcUrl?: string;
}): Promise<{ claims: number; payout: boolean }> {
  const storage = await openStorage(stack.databaseUrl, { poolSize: 1 });
  try {
    const settings = {
      authorizerKey: devAccount(CHANNEL_AUTHORIZER_ACCOUNT_INDEX).privateKey,
      withdrawDelaySeconds: 86_400,
      claims: { intervalMs: 3_600_000, thresholdAtomic: 1_000_000n, checkMs: 30_000 },
    };
    const scheme = channelScheme(stack.payTo, settings, storage.channels);
    const gateway = gatewayFor(
      {
        network: polygon,
        payTo: stack.payTo,
        facilitators: [
          {
            name: "facilitator",
            url: stack.facilitatorUrl,
            builtIn: false,
            auth: stack.facilitatorAuthHeader ? headerAuth(stack.facilitatorAuthHeader) : { kind: "none" },
          },
        ],
        facilitatorTimeoutMs: 30_000,
        facilitatorBreaker: { failureThreshold: 3, cooldownMs: 30_000 },
        paymentTimeoutSeconds: 300,
        upto: false,
        chainRpcUrl: stack.chainRpcUrl,
      },
      undefined,
      scheme,
    );
    const report = await claimChannels({
      scheme,
      storage: storage.channels,
      gateway,
      ledger: storage.ledger,
      writes: new DeferredWrites((work) => work),
      network: polygon,
      payouts: new ReceiverPayouts(polygon, chainRpcUrlOf({ network: polygon, chainRpcUrl: stack.chainRpcUrl })),
    });
    return { claims: report.claims.length, payout: report.payout !== undefined };
  } finally {
    await storage.close();
  }
}
