import type { Channel, ChannelStorage, ChannelUpdateResult } from "@x402/evm/batch-settlement/server";
import type Database from "better-sqlite3";
import {
  channelColumns,
  channelKey,
  channelOf,
  channelSelection,
  updateChannelAtomically,
  type ChannelRow,
  type VersionedChannels,
} from "../channel-rows";
import type { SqliteDatabase } from "./open-sqlite";

const selected = channelSelection();
const placeholders = channelColumns.map(() => "?").join(", ");
const assignments = channelColumns
  .slice(1)
  .map((column) => `${column} = ?`)
  .join(", ");

/** Batch-settlement channels on SQLite: each write one conditional statement on the row's version. */
export class SqliteChannels implements ChannelStorage {
  private readonly rows: VersionedChannels;
  private readonly all: Database.Statement;
  private readonly one: Database.Statement;

  constructor(database: SqliteDatabase) {
    const client: Database.Database = database.$client;
    this.one = client.prepare(`select ${selected} from payment_channels where channel_id = ?`);
    this.all = client.prepare(`select ${selected} from payment_channels order by channel_id`);
    const insert = client.prepare(
      `insert into payment_channels (${channelColumns.join(", ")}, version) values (${placeholders}, 1)
        on conflict (channel_id) do nothing`,
    );
    const replace = client.prepare(
      `update payment_channels set ${assignments}, version = version + 1 where channel_id = ? and version = ?`,
    );
    const remove = client.prepare("delete from payment_channels where channel_id = ? and version = ?");
    this.rows = {
      read: async (key) => {
        const row = this.one.get(key) as (ChannelRow & { version: number }) | undefined;
        return row && { channel: channelOf(row), version: row.version };
      },
      insert: async (values) => insert.run(...values).changes === 1,
      replace: async ([key, ...rest], version) => replace.run(...rest, key, version).changes === 1,
      remove: async (key, version) => remove.run(key, version).changes === 1,
    };
  }

  async get(channelId: string): Promise<Channel | undefined> {
    const row = this.one.get(channelKey(channelId)) as ChannelRow | undefined;
    return row && channelOf(row);
  }

  async list(): Promise<Channel[]> {
    return (this.all.all() as ChannelRow[]).map(channelOf);
  }

  updateChannel(
    channelId: string,
    update: (current: Channel | undefined) => Channel | undefined,
  ): Promise<ChannelUpdateResult> {
    return updateChannelAtomically(this.rows, channelId, update);
  }
}
