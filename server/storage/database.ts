import { mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { drizzle, type BetterSQLite3Database } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import * as schema from "./schema";

export type AppDatabase = BetterSQLite3Database<typeof schema> & { $client: Database.Database };

/** `file:./data/paysvc.sqlite`, a bare path, or `:memory:`. */
export function sqlitePathFromUrl(databaseUrl: string): string {
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error("DATABASE_URL: PostgreSQL is not supported by this build yet; use a file: URL for SQLite");
  }
  return databaseUrl.replace(/^file:(\/\/)?/, "");
}

const MIGRATIONS_FOLDER = join(process.cwd(), "server", "storage", "migrations");

/** Opens the database and applies pending migrations (idempotent, so every process may call it at start). */
export function openDatabase(databaseUrl: string): AppDatabase {
  const path = sqlitePathFromUrl(databaseUrl);
  if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
  const client = new Database(path);
  client.pragma("journal_mode = WAL");
  client.pragma("synchronous = NORMAL");
  client.pragma("busy_timeout = 5000");
  client.pragma("foreign_keys = ON");
  const database = drizzle(client, { schema });
  migrate(database, { migrationsFolder: MIGRATIONS_FOLDER });
  return database as AppDatabase;
}
