import type { ChannelStorage } from "@x402/evm/batch-settlement/server";
import { createPublicClient, http, type Abi } from "viem";
import type { EvmNetwork } from "../../networks";
import { chainFor } from "../../networks/viem-chain";
import { ReceiverPayouts, type ReceiverPayout } from "../channels/receiver-payouts";
import type { PaymentLedger, PaymentRecord } from "../payment/payment-ledger";

/** The channel contract's record of a channel: its deposit and what has been claimed of it. */
const channelsAbi = [
  {
    type: "function",
    name: "channels",
    stateMutability: "view",
    inputs: [{ name: "channelId", type: "bytes32" }],
    outputs: [
      { name: "balance", type: "uint128" },
      { name: "totalClaimed", type: "uint128" },
    ],
  },
] as const satisfies Abi;

/** One channel against the chain and the ledger. */
export interface ReconciledChannel {
  channel: string;
  outcome: "agrees" | "settled" | "mismatch";
  /** What the channel was charged (its running total), what its ledger rows add up to, and what is claimed on chain. */
  charged: bigint;
  ledgerCharged: bigint;
  claimedOnChain: bigint;
  detail?: string;
}

export interface ChannelReconcilerServices {
  network: EvmNetwork;
  channels: ChannelStorage;
  ledger: PaymentLedger;
  chainRpcUrl: string;
  contract: `0x${string}`;
  /** The deployment's pay-to (PAY_TO), when known: the channels' receiver, also once its channels are gone. */
  payTo?: string;
}

/**
 * Every channel of the deployment against the chain and the ledger: its ledger rows add up to its running total
 * (each voucher charged once), and what the chain says is claimed of it is what its `settled` rows add up to
 * (claimed = the sum of the vouchers charged, to the unit). Rows a claim on chain covers that still say `charged`
 * (the claimer stopped before recording it) are recorded as settled, unless only checking.
 */
export async function reconcileChannels(
  services: ChannelReconcilerServices,
  check: boolean,
): Promise<ReconciledChannel[]> {
  const chain = createPublicClient({
    chain: chainFor(services.network, services.chainRpcUrl),
    transport: http(services.chainRpcUrl),
  });
  const rowsByChannel = await channelRows(services.ledger);
  const results: ReconciledChannel[] = [];
  for (const channel of await services.channels.list()) {
    const id = channel.channelId.toLowerCase();
    const [, claimedOnChain] = await chain.readContract({
      address: services.contract,
      abi: channelsAbi,
      functionName: "channels",
      args: [id as `0x${string}`],
    });
    const rows = rowsByChannel.get(id) ?? [];
    const charged = BigInt(channel.chargedCumulativeAmount);
    const ledgerCharged = rows.reduce((sum, row) => sum + (row.settledAmount ?? 0n), 0n);
    const result: ReconciledChannel = { channel: id, outcome: "agrees", charged, ledgerCharged, claimedOnChain };
    if (ledgerCharged !== charged) {
      results.push({
        ...result,
        outcome: "mismatch",
        detail: `its rows add up to ${ledgerCharged}, its running total is ${charged}`,
      });
      continue;
    }
    // Claims take whole vouchers: the rows up to the total claimed on chain are the claimed ones.
    const claimedRows = rows.filter((row) => totalOf(row) <= claimedOnChain);
    const claimedSum = claimedRows.reduce((sum, row) => sum + (row.settledAmount ?? 0n), 0n);
    if (claimedSum !== claimedOnChain) {
      results.push({
        ...result,
        outcome: "mismatch",
        detail: `claimed on chain ${claimedOnChain}, its vouchers up to it ${claimedSum}`,
      });
      continue;
    }
    const unrecorded = claimedRows.filter((row) => row.status === "charged");
    if (unrecorded.length > 0 && !check) {
      for (const row of unrecorded) await services.ledger.updateIf(row.id, "charged", { status: "settled" });
    }
    results.push(
      unrecorded.length > 0
        ? { ...result, outcome: "settled", detail: `${unrecorded.length} claimed row(s) recorded as settled` }
        : result,
    );
  }
  return results;
}

/** The running total a channel row's nonce names (`<channel>:<total>`). */
function totalOf(row: PaymentRecord): bigint {
  return BigInt(row.nonce.slice(row.nonce.lastIndexOf(":") + 1));
}

/** The ledger's channel rows (charged or settled), by channel. */
async function channelRows(ledger: PaymentLedger): Promise<Map<string, PaymentRecord[]>> {
  const byChannel = new Map<string, PaymentRecord[]>();
  for (let after = 0; ;) {
    const page = await ledger.listByStatus(["charged", "settled"], after, 500);
    for (const row of page) {
      if (row.scheme !== "batch-settlement") continue;
      const channel = row.nonce.slice(0, row.nonce.lastIndexOf(":"));
      byChannel.set(channel, [...(byChannel.get(channel) ?? []), row]);
    }
    if (page.length < 500) return byChannel;
    after = page.at(-1)!.id;
  }
}

/**
 * What the channel contract holds, claimed and not yet paid out, for the deployment's receivers: the pay-to and
 * the receiver of every channel still stored (one that PAY_TO named before). A sum held is no contradiction (a payout
 * follows each claim) but the receiver does not have it: `paysvc channels claim` sends it.
 */
export async function reconcilePayouts(services: ChannelReconcilerServices): Promise<ReceiverPayout[]> {
  const receivers = new Map<string, string>();
  for (const receiver of [
    ...(services.payTo ? [services.payTo] : []),
    ...(await services.channels.list()).map((channel) => channel.channelConfig.receiver),
  ]) {
    if (!receivers.has(receiver.toLowerCase())) receivers.set(receiver.toLowerCase(), receiver);
  }
  const payouts = new ReceiverPayouts(services.network, services.chainRpcUrl, services.contract);
  return Promise.all([...receivers.values()].map((receiver) => payouts.read(receiver)));
}
