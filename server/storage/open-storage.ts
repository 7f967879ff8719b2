import { databaseLocation } from "../../config/database-url";
import { openPostgresStorage } from "./postgres/postgres-storage";
import { openSqliteStorage } from "./sqlite/sqlite-storage";
import type { Storage } from "./storage";

export interface StorageOptions {
  /** PostgreSQL connections per process (DATABASE_POOL_SIZE). */
  poolSize?: number;
  /**
   * PostgreSQL: how long a query waits for a connection, then for its answer, before it fails (a server stopped or
   * paused); unbounded unless told (the CLI's long reports).
   */
  timeoutMs?: number;
  /** SQLite: flush the write-ahead log in the background, for a server's long-lived connection. */
  walFlush?: boolean;
}

/** The storage DATABASE_URL names, connected and migrated. */
export async function openStorage(databaseUrl: string, options: StorageOptions = {}): Promise<Storage> {
  const location = databaseLocation(databaseUrl);
  if (location.engine === "postgresql")
    return openPostgresStorage(location.url, { poolSize: options.poolSize ?? 10, timeoutMs: options.timeoutMs });
  return openSqliteStorage(location.path, { walFlush: options.walFlush });
}
