import type { Channel, ChannelStorage, ChannelUpdateResult } from "@x402/evm/batch-settlement/server";
import {
  channelColumns,
  channelKey,
  channelOf,
  channelSelection,
  updateChannelAtomically,
  type ChannelRow,
  type VersionedChannels,
} from "../channel-rows";
import type { PostgresDatabase } from "./open-postgres";

/** Numerics and bigints read back as text: exact, whatever their size. */
const selected = channelSelection("::text");
const placeholders = channelColumns.map((_, index) => `$${index + 1}`).join(", ");
const assignments = channelColumns
  .slice(1)
  .map((column, index) => `${column} = $${index + 2}`)
  .join(", ");
const VERSION = `$${channelColumns.length + 1}`;

/** Batch-settlement channels on PostgreSQL, the statements of SQLite's (sqlite-channels.ts), for every instance. */
export class PostgresChannels implements ChannelStorage {
  private readonly rows: VersionedChannels;

  constructor(private readonly database: PostgresDatabase) {
    const client = database.$client;
    this.rows = {
      read: async (key) => {
        const { rows } = await client.query<ChannelRow & { version: string }>(
          `select ${selected} from payment_channels where channel_id = $1`,
          [key],
        );
        const [row] = rows;
        return row && { channel: channelOf(row), version: Number(row.version) };
      },
      insert: async (values) =>
        (
          await client.query(
            `insert into payment_channels (${channelColumns.join(", ")}, version) values (${placeholders}, 1)
              on conflict (channel_id) do nothing`,
            values,
          )
        ).rowCount === 1,
      replace: async (values, version) =>
        (
          await client.query(
            `update payment_channels set ${assignments}, version = version + 1
              where channel_id = $1 and version = ${VERSION}`,
            [...values, version],
          )
        ).rowCount === 1,
      remove: async (key, version) =>
        (await client.query("delete from payment_channels where channel_id = $1 and version = $2", [key, version]))
          .rowCount === 1,
    };
  }

  async get(channelId: string): Promise<Channel | undefined> {
    return (await this.rows.read(channelKey(channelId)))?.channel;
  }

  async list(): Promise<Channel[]> {
    const { rows } = await this.database.$client.query<ChannelRow>(
      `select ${selected} from payment_channels order by channel_id`,
    );
    return rows.map(channelOf);
  }

  updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    return updateChannelAtomically(this.rows, channelId, update);
  }
}
