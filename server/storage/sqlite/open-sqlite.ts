import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { pendingMigrations } from "../migrations";
import * as schema from "./schema";
import { reuseStatements } from "./statement-cache";
import { flushWalInBackground } from "./wal-flush";

export type SqliteDatabase = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/**
 * Opens the SQLite file `path` and applies pending migrations (idempotent, so every process may call it at start).
 * A server's long-lived connection asks for `walFlush` (see wal-flush.ts).
 */
export function openSqlite(path: string, options: { walFlush?: boolean } = {}): SqliteDatabase {
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new Database(path);
  reuseStatements(client);
  client.pragma("journal_mode = WAL");
  client.pragma("synchronous = NORMAL");
  client.pragma("busy_timeout = 5000");
  client.pragma("foreign_keys = ON");
  migrate(client);
  if (options.walFlush) flushWalInBackground(client);
  return drizzle(client, { schema }) as SqliteDatabase;
}

/**
 * Applies the pending migrations in one IMMEDIATE transaction: it takes the file's write lock before reading
 * what was applied, so a second process starting at once waits (busy_timeout), then finds nothing left to do.
 * The record table is the one drizzle's migrator keeps.
 */
function migrate(client: Database.Database): void {
  const apply = client.transaction(() => {
    client.exec(
      "create table if not exists __drizzle_migrations (id integer primary key, hash text not null, created_at numeric)",
    );
    const last = client.prepare("select max(created_at) from __drizzle_migrations").pluck().get() as number | null;
    const record = client.prepare("insert into __drizzle_migrations (hash, created_at) values (?, ?)");
    for (const migration of pendingMigrations("sqlite", last ?? undefined)) {
      for (const statement of migration.sql) if (statement.trim()) client.exec(statement);
      record.run(migration.hash, migration.folderMillis);
    }
  });
  apply.immediate();
}
