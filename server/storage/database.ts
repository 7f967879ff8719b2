import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import * as schema from "./schema";
import { flushWalInBackground } from "./wal-flush";

export type AppDatabase = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** `file:./data/paysvc.sqlite`, a bare path, or `:memory:`. */
export function sqlitePathFromUrl(databaseUrl: string): string {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error("DATABASE_URL: PostgreSQL is not supported by this build yet; use a file: URL for SQLite");
  }
  return databaseUrl.replace(/^file:(\/\/)?/, "");
}

const MIGRATIONS_FOLDER = join(process.cwd(), "server", "storage", "migrations");

/**
 * Opens the database and applies pending migrations (idempotent, so every process may call it at start). A
 * server's long-lived connection asks for `walFlush` (see wal-flush.ts).
 */
export function openDatabase(databaseUrl: string, options: { walFlush?: boolean } = {}): AppDatabase {
  const path = sqlitePathFromUrl(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new Database(path);
  reuseStatements(client);
  client.pragma("journal_mode = WAL");
  client.pragma("synchronous = NORMAL");
  client.pragma("busy_timeout = 5000");
  client.pragma("foreign_keys = ON");
  const database = drizzle(client, { schema });
  migrate(database, { migrationsFolder: MIGRATIONS_FOLDER });
  if (options.walFlush) flushWalInBackground(client);
  return database as AppDatabase;
}

const STATEMENT_CACHE_SIZE = 256;

/**
 * drizzle prepares every query it runs, and better-sqlite3 compiles the SQL on every prepare: on the prepaid path
 * that was most of the database time. A compiled statement can be run again with other values, so the most
 * recently used ones are kept, keyed by their SQL text (which holds placeholders, never values).
 */
function reuseStatements(client: Database.Database): void {
  const prepare = client.prepare.bind(client);
  const statements = new Map<string, Database.Statement>();
  client.prepare = ((source: string) => {
    const cached = statements.get(source);
    // A statement still being iterated cannot be run again until the iteration ends.
    if (cached && !cached.busy) {
      statements.delete(source);
      statements.set(source, cached);
      // drizzle switches a statement to raw (array) rows for some reads; a fresh statement returns objects.
      if (cached.reader) cached.raw(false);
      return cached;
    }
    const statement = prepare(source);
    statements.set(source, statement);
    if (statements.size > STATEMENT_CACHE_SIZE) statements.delete(statements.keys().next().value as string);
    return statement;
  }) as typeof client.prepare;
}
