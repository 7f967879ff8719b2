import { createPublicClient, http, type Abi } from "viem";
import type { ChannelSettings } from "../../config/channels";
import { chainFor } from "../../networks/viem-chain";
import { logEvent } from "../core/log";
import { claimChannels, unclaimedOf, type ClaimReport, type ClaimServices } from "./channel-claims";

/** The channel contract's view of a payer's withdrawal under way (`initiatedAt` 0: none). */
const pendingWithdrawalsAbi = [
  {
    type: "function",
    name: "pendingWithdrawals",
    stateMutability: "view",
    inputs: [{ name: "channelId", type: "bytes32" }],
    outputs: [
      { name: "amount", type: "uint128" },
      { name: "initiatedAt", type: "uint40" },
    ],
  },
] as const satisfies Abi;

export interface BackgroundClaims extends ClaimServices {
  settings: ChannelSettings["claims"];
  chainRpcUrl: string;
  contract: `0x${string}`;
  /** Runs the work unless another process over the database runs it (Storage.exclusive). */
  exclusive: <T>(name: string, work: () => Promise<T>) => Promise<T | undefined>;
}

/**
 * The deployment's claimer: every `checkMs` one process over the database (the holder of its lock) looks at what
 * the channels owe and claims it when `intervalMs` has passed since this process last claimed, when it adds up to
 * the threshold, and at once for a channel whose payer started a withdrawal (read from the chain: what is not
 * claimed when it ends is the payer's again). Each claim ends with a payout of all the contract holds for the
 * pay-to, and every `intervalMs` that payout is made even when nothing is owed (a refund's claim whose payout
 * failed). Returns what stops it: the check under way is waited for, then what is owed is claimed and all that is
 * held paid out (a deploy leaves nothing unclaimed, nor unpaid in the contract).
 */
export function claimInBackground(services: BackgroundClaims): () => Promise<void> {
  const { settings } = services;
  const chain = createPublicClient({
    chain: chainFor(services.network, services.chainRpcUrl),
    transport: http(services.chainRpcUrl, { retryCount: 1, timeout: 10_000 }),
  });
  let lastClaimed = Date.now();
  let running: Promise<unknown> | undefined;
  const check = () =>
    services.exclusive("channel-claims", async () => {
      const owing = (await services.storage.list()).filter((channel) => unclaimedOf(channel) > 0n);
      const total = owing.reduce((sum, channel) => sum + unclaimedOf(channel), 0n);
      const due =
        Date.now() - lastClaimed >= settings.intervalMs || (owing.length > 0 && total >= settings.thresholdAtomic);
      const leaving = due || owing.length === 0 ? [] : await withdrawing(owing.map((channel) => channel.channelId));
      if (!due && leaving.length === 0) return;
      const report = await claimChannels(services, due ? undefined : leaving);
      if (due) lastClaimed = Date.now();
      logClaims(report, due ? "due" : "withdrawal");
    });
  const withdrawing = async (channelIds: string[]): Promise<string[]> => {
    const results = await chain.multicall({
      contracts: channelIds.map((channelId) => ({
        address: services.contract,
        abi: pendingWithdrawalsAbi,
        functionName: "pendingWithdrawals" as const,
        args: [channelId as `0x${string}`] as const,
      })),
    });
    return channelIds.filter((_, index) => {
      const result = results[index]!;
      return result.status === "success" && result.result[1] > 0;
    });
  };
  const timer = setInterval(() => {
    if (running) return;
    running = check()
      .catch((error: unknown) => logEvent("error", "channel_claims_failed", { error: (error as Error).message }))
      .finally(() => (running = undefined));
  }, settings.checkMs);
  timer.unref();
  return async () => {
    clearInterval(timer);
    await running;
    const report = await services
      .exclusive("channel-claims", () => claimChannels(services))
      .catch((error: unknown) => logEvent("error", "channel_claims_failed", { error: (error as Error).message }));
    if (report) logClaims(report, "shutdown");
  };
}

function logClaims(report: ClaimReport, why: string): void {
  const { claims, failed, payout, payoutFailed } = report;
  if (claims.length === 0 && failed.length === 0 && !payout && !payoutFailed) return;
  logEvent(failed.length > 0 || payoutFailed ? "error" : "info", "channels_claimed", {
    why,
    claims: claims.map((claim) => ({ ...claim, amount: claim.amount.toString() })),
    payout: payout && { ...payout, amount: payout.amount.toString() },
    payoutFailed,
    failed,
  });
}
