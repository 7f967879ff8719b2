import { databaseLocation } from "../../config/database-url";
import { openPostgresStorage } from "./postgres/postgres-storage";
import { openSqliteStorage } from "./sqlite/sqlite-storage";
import type { Storage } from "./storage";

export interface StorageOptions {
  /** PostgreSQL connections per process (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /** SQLite: flush the write-ahead log in the background, for a server's long-lived connection. */
  walFlush?: boolean;
}

/** The storage DATABASE_URL names, connected and migrated. */
export async function openStorage(databaseUrl: string, options: StorageOptions = {}): Promise<Storage> {
  const location = databaseLocation(databaseUrl);
  if (location.engine === "postgresql") return openPostgresStorage(location.url, options.poolSize ?? 10);
  return openSqliteStorage(location.path, { walFlush: options.walFlush });
}
