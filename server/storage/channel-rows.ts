import type { Channel, ChannelUpdateResult } from "@x402/evm/batch-settlement/server";

/** A whole number as an engine reads it: SQLite's integer, or PostgreSQL's bigint as text. */
type Whole = number | string;

/** A payment_channels row as both engines read it (channelSelection): amounts as decimal strings. */
export interface ChannelRow {
  channelId: string;
  payer: string;
  receiver: string;
  token: string;
  channelConfig: string;
  chargedCumulativeAmount: string;
  signedMaxClaimable: string;
  signature: string;
  balance: string;
  totalClaimed: string;
  withdrawRequestedAt: Whole;
  refundNonce: Whole;
  onchainSyncedAt: Whole | null;
  lastRequestTimestamp: Whole;
  pendingId: string | null;
  pendingSignedMaxClaimable: string | null;
  pendingExpiresAt: Whole | null;
}

/** The columns in the order the engines' statements bind them, `version` last. */
export const channelColumns = [
  "channel_id",
  "payer",
  "receiver",
  "token",
  "channel_config",
  "charged_cumulative_amount",
  "signed_max_claimable",
  "signature",
  "balance",
  "total_claimed",
  "withdraw_requested_at",
  "refund_nonce",
  "onchain_synced_at",
  "last_request_timestamp",
  "pending_id",
  "pending_signed_max_claimable",
  "pending_expires_at",
] as const;

const camel = (column: string) => column.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());

/** The select list of a ChannelRow and its version, each column read with `cast` (PostgreSQL: `::text`). */
export function channelSelection(cast = ""): string {
  return [...channelColumns, "version"].map((column) => `${column}${cast} as "${camel(column)}"`).join(", ");
}

/** The key a channel is stored under: channel ids are hex, compared without case. */
export const channelKey = (channelId: string) => channelId.toLowerCase();

const AMOUNT = /^(0|[1-9][0-9]*)$/;

/** An amount of the scheme's state, checked to be a whole number of atomic units (never a float, never negative). */
function amount(value: string, field: string): string {
  if (typeof value !== "string" || !AMOUNT.test(value)) {
    throw new Error(`channel ${field} must be a whole number of atomic units, not ${JSON.stringify(value)}`);
  }
  return value;
}

/** A channel as its row, in channelColumns' order. */
export function channelValues(channel: Channel): unknown[] {
  const { channelConfig: config, pendingRequest: pending } = channel;
  return [
    channelKey(channel.channelId),
    config.payer.toLowerCase(),
    config.receiver.toLowerCase(),
    config.token.toLowerCase(),
    JSON.stringify(config),
    amount(channel.chargedCumulativeAmount, "chargedCumulativeAmount"),
    amount(channel.signedMaxClaimable, "signedMaxClaimable"),
    channel.signature,
    amount(channel.balance, "balance"),
    amount(channel.totalClaimed, "totalClaimed"),
    channel.withdrawRequestedAt,
    channel.refundNonce,
    channel.onchainSyncedAt ?? null,
    channel.lastRequestTimestamp,
    pending?.pendingId ?? null,
    pending ? amount(pending.signedMaxClaimable, "pendingRequest.signedMaxClaimable") : null,
    pending?.expiresAt ?? null,
  ];
}

/** A row as the channel the scheme keeps. */
export function channelOf(row: ChannelRow): Channel {
  const channel: Channel = {
    channelId: row.channelId,
    channelConfig: JSON.parse(row.channelConfig) as Channel["channelConfig"],
    chargedCumulativeAmount: row.chargedCumulativeAmount,
    signedMaxClaimable: row.signedMaxClaimable,
    signature: row.signature,
    balance: row.balance,
    totalClaimed: row.totalClaimed,
    withdrawRequestedAt: Number(row.withdrawRequestedAt),
    refundNonce: Number(row.refundNonce),
    lastRequestTimestamp: Number(row.lastRequestTimestamp),
  };
  if (row.onchainSyncedAt !== null) channel.onchainSyncedAt = Number(row.onchainSyncedAt);
  if (row.pendingId !== null) {
    channel.pendingRequest = {
      pendingId: row.pendingId,
      signedMaxClaimable: row.pendingSignedMaxClaimable!,
      expiresAt: Number(row.pendingExpiresAt),
    };
  }
  return channel;
}

/** One engine's conditional statements on payment_channels: each applies only to the version it names. */
export interface VersionedChannels {
  read(key: string): Promise<{ channel: Channel; version: number } | undefined>;
  /** Inserts the channel at version 1 unless a row has its key; whether it did. */
  insert(values: unknown[]): Promise<boolean>;
  /** Replaces the row while it is at `version`, moving it to the next; whether it did. */
  replace(values: unknown[], version: number): Promise<boolean>;
  /** Deletes the row while it is at `version`; whether it did. */
  remove(key: string, version: number): Promise<boolean>;
}

/**
 * ChannelStorage's `updateChannel` over conditional statements: read the row and its version, run `update` on it,
 * then write only if the row is still at that version; otherwise read again and run `update` again (the scheme
 * allows that: the callback may run more than once). Every instance over the database sees one order of updates.
 */
export async function updateChannelAtomically(
  rows: VersionedChannels,
  channelId: string,
  update: (current: Channel | undefined) => Channel | undefined,
): Promise<ChannelUpdateResult> {
  const key = channelKey(channelId);
  for (;;) {
    const read = await rows.read(key);
    const current = read?.channel;
    const next = update(current);
    if (next === current) return { channel: current, status: "unchanged" };
    if (next === undefined) {
      if (await rows.remove(key, read!.version)) return { channel: undefined, status: "deleted" };
      continue;
    }
    if (channelKey(next.channelId) !== key) {
      throw new Error(`an update of channel ${channelId} returned channel ${next.channelId}`);
    }
    const values = channelValues(next);
    if (read ? await rows.replace(values, read.version) : await rows.insert(values)) {
      return { channel: next, status: "updated" };
    }
  }
}
