import type { FacilitatorClient } from "@x402/core/server";
import type { BatchSettlementEvmScheme, Channel, ChannelStorage } from "@x402/evm/batch-settlement/server";
import type { EvmNetwork } from "../../networks";
import { logEvent } from "../core/log";
import type { PaymentGateway } from "../payment/payment-gateway";
import type { PaymentLedger } from "../payment/payment-ledger";
import type { DeferredWrites } from "../lifecycle/deferred-writes";
import type { ReceiverPayouts } from "./receiver-payouts";

/** Channels per claim transaction: a claim is all or nothing, so one bad voucher costs no more than its batch. */
const BATCH = 25;

/** What claiming did: each transaction with the channels and amount it claimed, and the payout to the pay-to. */
export interface ClaimReport {
  claims: { transaction: string; channels: string[]; amount: bigint }[];
  /** The transaction that sent the pay-to what the contract held for it, and that sum; undefined when none was held. */
  payout?: { transaction: string; amount: bigint };
  /** Why the sum the contract holds for the pay-to was not sent (or could not be read): the next payout sends it. */
  payoutFailed?: string;
  /** Channels whose claim failed (their batch), with why. */
  failed: { channels: string[]; reason: string }[];
}

export interface ClaimServices {
  scheme: BatchSettlementEvmScheme;
  storage: ChannelStorage;
  gateway: PaymentGateway;
  ledger: PaymentLedger;
  writes: DeferredWrites;
  network: EvmNetwork;
  /** What the channel contract holds for the pay-to, claimed and not yet paid out. */
  payouts: ReceiverPayouts;
}

/** What a channel owes the deployment that is not claimed yet. */
export function unclaimedOf(channel: Channel): bigint {
  return BigInt(channel.chargedCumulativeAmount) - BigInt(channel.totalClaimed);
}

/**
 * Claims what channels owe: their latest vouchers, in batches, through the facilitator (the deployment's authorizer
 * signs each batch; the facilitator sends it), then one payout to the pay-to of everything the contract holds for it,
 * whoever claimed it (a refund's claim, an earlier payout that failed): a claim alone leaves the money in the
 * contract. Each ledger row a claim covers moves from `charged` to `settled`, with the claim's transaction.
 * Claiming twice is harmless: the contract claims nothing a second time.
 */
export async function claimChannels(services: ClaimServices, channelIds?: readonly string[]): Promise<ClaimReport> {
  const wanted = channelIds && new Set(channelIds.map((id) => id.toLowerCase()));
  const owing = (await services.storage.list()).filter(
    (channel) => unclaimedOf(channel) > 0n && (!wanted || wanted.has(channel.channelId.toLowerCase())),
  );
  const report: ClaimReport = { claims: [], failed: [] };
  let manager: ChannelManager | undefined;
  if (owing.length > 0) manager = await channelManager(services);
  for (let start = 0; start < owing.length; start += BATCH) {
    const batch = owing.slice(start, start + BATCH);
    const ids = new Set(batch.map((channel) => channel.channelId));
    try {
      const [result] = await manager!.claim({
        maxClaimsPerBatch: BATCH,
        selectClaimChannels: (channels) => channels.filter((channel) => ids.has(channel.channelId)),
      });
      if (!result) continue;
      const amount = batch.reduce((sum, channel) => sum + unclaimedOf(channel), 0n);
      report.claims.push({ transaction: result.transaction, channels: [...ids], amount });
      for (const channel of batch) await recordClaim(services, channel, result.transaction);
    } catch (error) {
      report.failed.push({ channels: [...ids], reason: (error as Error).message });
      logEvent("error", "channel_claim_failed", { channels: [...ids], error: (error as Error).message });
    }
  }
  const payout = await payOutHeld(services, manager);
  if (payout?.transaction) report.payout = { transaction: payout.transaction, amount: payout.amount };
  else if (payout) report.payoutFailed = payout.failed;
  return report;
}

type ChannelManager = Awaited<ReturnType<typeof channelManager>>;

/** The SDK's channel manager for this deployment's channels, through the first facilitator up that lists them. */
export async function channelManager(services: Pick<ClaimServices, "scheme" | "gateway" | "network">) {
  return services.scheme.createChannelManager(
    await channelFacilitator(services.gateway, services.network.id),
    services.network.id,
    services.network.usdc.address as `0x${string}`,
  );
}

/**
 * Sends the pay-to everything the contract holds for it, read from the chain first: undefined when it holds
 * nothing; else the sum and the payout's transaction, or why it was not sent (the next claim, the periodic check
 * or the drain on the way out send it). Another process paying out at the same time is harmless: the contract sends
 * each claimed unit once, and the facilitator refuses a payout of nothing.
 */
export async function payOutHeld(
  services: Pick<ClaimServices, "scheme" | "gateway" | "network" | "payouts">,
  manager?: ChannelManager,
): Promise<{ amount: bigint; transaction?: string; failed?: string } | undefined> {
  const receiver = services.scheme.getReceiverAddress();
  let amount: bigint;
  try {
    amount = (await services.payouts.read(receiver)).awaitingPayout;
  } catch (error) {
    const failed = `the channel contract could not be read: ${(error as Error).message}`;
    logEvent("warn", "channel_payout_failed", { error: failed });
    return { amount: 0n, failed };
  }
  if (amount === 0n) return undefined;
  try {
    const { transaction } = await (manager ?? (await channelManager(services))).settle();
    return { amount, transaction };
  } catch (error) {
    // Another process (a refund, the claimer) may have sent it meanwhile: then nothing is left to report.
    const left = await services.payouts.read(receiver).then(
      (payout) => payout.awaitingPayout,
      () => amount,
    );
    if (left === 0n) return undefined;
    logEvent("warn", "channel_payout_failed", { amount: left.toString(), error: (error as Error).message });
    return { amount: left, failed: (error as Error).message };
  }
}

/** The first facilitator up that lists channels on the network: claims, payouts and refunds go through it. */
export async function channelFacilitator(gateway: PaymentGateway, network: string): Promise<FacilitatorClient> {
  for (const route of gateway.routes) {
    if (route.breaker.state() === "open") continue;
    const listed = await route.initialize().then(
      () => route.lists("batch-settlement", network),
      () => false,
    );
    if (listed) return route.facilitator;
  }
  throw new Error(`no facilitator up lists batch-settlement on ${network}`);
}

/** The ledger rows of a claimed channel, up to the total claimed: settled, with the claim's transaction. */
export async function recordClaim(
  services: Pick<ClaimServices, "ledger" | "writes">,
  channel: Channel,
  transaction: string,
): Promise<void> {
  const prefix = `${channel.channelId.toLowerCase()}:`;
  const claimedTotal = BigInt(channel.chargedCumulativeAmount);
  await services.writes.write("ledger_update", { channel: channel.channelId, transaction }, async () => {
    for (let after = 0; ;) {
      const page = await services.ledger.listByStatus(["charged"], after, 500);
      if (page.length === 0) return;
      for (const row of page) {
        if (!row.nonce.startsWith(prefix) || BigInt(row.nonce.slice(prefix.length)) > claimedTotal) continue;
        await services.ledger.updateIf(row.id, "charged", { status: "settled", transaction });
      }
      after = page.at(-1)!.id;
    }
  });
}
