import { desc, type SQL } from "drizzle-orm";
import type { SQLiteUpdateSetSource } from "drizzle-orm/sqlite-core";
import type { KeyFilter, KeyRecord, OwnedKeyStore } from "../../prepaid/owned-keys";
import { ownedKeyQueries } from "../owned-key-queries";
import type { SqliteDatabase } from "./open-sqlite";
import { prepaidKeys } from "./schema";

const queries = ownedKeyQueries(prepaidKeys);

/** Keys changed by their owners or the operator on SQLite (owned-keys.ts; the queries are owned-key-queries.ts's). */
export class SqliteOwnedKeys implements OwnedKeyStore {
  constructor(private readonly database: SqliteDatabase) {}

  async list(filter: KeyFilter, limit = 1000): Promise<KeyRecord[]> {
    return this.database
      .select(queries.record)
      .from(prepaidKeys)
      .where(queries.sold(filter))
      .orderBy(desc(prepaidKeys.id))
      .limit(limit)
      .all();
  }

  rotate(id: number, owner: string | undefined, code: string): Promise<boolean> {
    return this.change(queries.changes.rotate(code), queries.usable(id, owner));
  }

  revoke(id: number, owner: string | undefined): Promise<boolean> {
    return this.change(queries.changes.revoke(), queries.usable(id, owner));
  }

  topUp(id: number, owner: string, model: string, tokens: number): Promise<boolean> {
    return this.change(queries.changes.topUp(tokens), queries.usable(id, owner, model));
  }

  setLimits(id: number, owner: string | undefined, limits: string | null): Promise<boolean> {
    return this.change(queries.changes.limits(limits), queries.usable(id, owner));
  }

  /** Writes `values` on the key `where` finds; whether there was one. */
  private async change(values: SQLiteUpdateSetSource<typeof prepaidKeys>, where: SQL): Promise<boolean> {
    return this.database.update(prepaidKeys).set(values).where(where).run().changes > 0;
  }
}
