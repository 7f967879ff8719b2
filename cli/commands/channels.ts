import type { Command } from "commander";
import { loadChannelClaimConfig, loadLedgerConfig, type ChannelClaimConfig } from "../../config/ledger-config";
import type { EvmNetwork } from "../../networks";
import {
  channelManager,
  claimChannels,
  payOutHeld,
  recordClaim,
  unclaimedOf,
  type ClaimServices,
} from "../../server/channels/channel-claims";
import { ReceiverPayouts } from "../../server/channels/receiver-payouts";
import { atomicToDecimal } from "../../server/core/money";
import { channelScheme } from "../../server/payment/channel-scheme";
import { gatewayFor } from "../../server/payment/gateway-for";
import { DeferredWrites } from "../../server/lifecycle/deferred-writes";
import { openStorage } from "../../server/storage/open-storage";
import { startBuiltInFacilitator } from "../lib/facilitator-server";
import { action, print, table } from "../lib/output";

export function registerChannelsCommand(program: Command): void {
  const channels = program
    .command("channels")
    .description(
      "The deployment's x402 batch-settlement channels: what each payer deposited, was charged, and what is claimed",
    );
  channels
    .command("list")
    .description("Every channel with its deposit, charges and claims (DATABASE_URL and NETWORK, as the app reads them)")
    .option("--json", "print JSON (amounts as strings of atomic units)")
    .action(
      action(async (options: { json?: boolean }) => {
        const config = loadLedgerConfig();
        const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
        try {
          const rows = (await storage.channels.list()).map((channel) => ({
            channel: channel.channelId,
            payer: channel.channelConfig.payer,
            deposit: BigInt(channel.balance),
            charged: BigInt(channel.chargedCumulativeAmount),
            claimed: BigInt(channel.totalClaimed),
            unclaimed: unclaimedOf(channel),
            withdrawRequestedAt: channel.withdrawRequestedAt || null,
          }));
          const usd = (amount: bigint) => atomicToDecimal(amount, config.network.usdc.decimals);
          print(options.json === true, rows, () =>
            rows.length === 0
              ? `${config.network.id}: no channels`
              : table([
                  ["channel", "payer", "deposit", "charged", "claimed", "unclaimed"],
                  ...rows.map((row) => [
                    row.channel,
                    row.payer,
                    usd(row.deposit),
                    usd(row.charged),
                    usd(row.claimed),
                    usd(row.unclaimed),
                  ]),
                ]),
          );
        } finally {
          await storage.close();
        }
      }),
    );
  channels
    .command("claim [channels...]")
    .description(
      "Claim what the channels (all, or those named) were charged, then pay out to PAY_TO all the channel contract holds for it (claims of refunds and earlier runs included). Exits 1 when a claim or the payout fails",
    )
    .option("--json", "print JSON")
    .action(
      action(async (ids: string[], options: { json?: boolean }) => {
        await withChannels(async (services) => {
          const report = await claimChannels(services, ids.length > 0 ? ids : undefined);
          const usd = (amount: bigint) => atomicToDecimal(amount, services.network.usdc.decimals);
          print(options.json === true, report, () =>
            [
              ...report.claims.map(
                (claim) =>
                  `claimed ${usd(claim.amount)} USD of ${claim.channels.length} channel(s): ${claim.transaction}`,
              ),
              ...report.failed.map((failure) => `failed for ${failure.channels.join(", ")}: ${failure.reason}`),
              report.claims.length === 0 && report.failed.length === 0 ? "nothing to claim" : "",
              report.payout
                ? `paid out ${usd(report.payout.amount)} USD to the pay-to: ${report.payout.transaction}`
                : report.payoutFailed
                  ? `the payout to the pay-to failed: ${report.payoutFailed}`
                  : "nothing held for the pay-to in the channel contract",
            ]
              .filter(Boolean)
              .join("\n"),
          );
          if (report.failed.length > 0 || report.payoutFailed) process.exitCode = 1;
        });
      }),
    );
  channels
    .command("refund <channel>")
    .description(
      "Give a channel's payer back what it deposited and was not charged (its charges are claimed in the same transaction)",
    )
    .option("--json", "print JSON")
    .action(
      action(async (id: string, options: { json?: boolean }) => {
        await withChannels(async (services) => {
          const channel = await services.storage.get(id);
          if (!channel) throw new Error(`no channel ${id} in this deployment's database`);
          const refunded = BigInt(channel.balance) - BigInt(channel.chargedCumulativeAmount);
          const manager = await channelManager(services);
          const [result] = await manager.refund([channel.channelId]);
          if (!result) throw new Error(`channel ${id}: nothing was refunded`);
          // Its charges were claimed in the same transaction, into the contract: they are sent on to the pay-to.
          if (unclaimedOf(channel) > 0n) await recordClaim(services, channel, result.transaction);
          const payout = await payOutHeld(services, manager);
          const outcome = { channel: channel.channelId, refunded, transaction: result.transaction, payout };
          print(
            options.json === true,
            outcome,
            () =>
              `refunded ${atomicToDecimal(refunded, 6)} USD to ${channel.channelConfig.payer}: ${result.transaction}`,
          );
        });
      }),
    );
}

/** The deployment's channels, storage and facilitators (the built-in one started for the command), then closed. */
async function withChannels(run: (services: ClaimServices) => Promise<void>): Promise<void> {
  const config: ChannelClaimConfig = loadChannelClaimConfig();
  const storage = await openStorage(config.databaseUrl, { poolSize: 1 });
  let builtIn: Awaited<ReturnType<typeof startBuiltInFacilitator>> | undefined;
  try {
    let { facilitators } = config;
    if (config.builtIn) {
      const started = await startBuiltInFacilitator(config.network, config.builtIn);
      builtIn = started;
      facilitators = facilitators.map((entry) =>
        entry.builtIn && !entry.url ? { ...entry, url: started.url, auth: started.auth } : entry,
      );
    }
    const scheme = channelScheme(config.payTo, config.channels, storage.channels);
    const gateway = gatewayFor(
      { ...config, facilitators: facilitators.filter((entry) => entry.url), upto: false },
      undefined,
      scheme,
    );
    await run({
      scheme,
      storage: storage.channels,
      gateway,
      ledger: storage.ledger,
      writes: new DeferredWrites((work) => work),
      network: config.network as EvmNetwork,
      payouts: new ReceiverPayouts(config.network as EvmNetwork, config.chainRpcUrl),
    });
  } finally {
    await builtIn?.stop();
    await storage.close();
  }
}
