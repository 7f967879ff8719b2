import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll } from "vitest";
import type { Engine } from "../../config/database-url";
import { openStorage } from "../../server/storage/open-storage";
import type { Storage } from "../../server/storage/storage";
import { startLocalPostgres, type LocalPostgres } from "./local-postgres";

/** Both engines, for store tests that must hold on each: `describe.each(engines)`. */
export const engines: Engine[] = ["sqlite", "postgresql"];

/**
 * Real databases for a test file: SQLite files in a temporary directory, and databases on one real PostgreSQL
 * server started for the file (never an imitation). Call at the top level of the file; `newDatabaseUrl` gives an
 * empty database each time.
 */
export function useTestDatabases(): { newDatabaseUrl(engine: Engine): Promise<string> } {
  let directory: string;
  let postgres: LocalPostgres | undefined;
  let count = 0;
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-stores-"));
    // PostgreSQL runs as an unprivileged user when we are root: it must reach its data directory.
    chmodSync(directory, 0o755);
  });
  afterAll(async () => {
    await postgres?.stop();
    rmSync(directory, { recursive: true, force: true });
  });
  return {
    async newDatabaseUrl(engine) {
      count += 1;
      if (engine === "sqlite") return `file:${join(directory, `store-${count}.sqlite`)}`;
      postgres ??= await startLocalPostgres({ dataDir: join(directory, "postgres"), port: 0 });
      await postgres.createDatabase(`store_${count}`);
      return postgres.url(`store_${count}`);
    },
  };
}

/**
 * Two storages over one new database of `engine`, as two instances over one database have: call in a `describe`;
 * what it opened is closed after each test.
 */
export function useTwoInstances(
  databases: ReturnType<typeof useTestDatabases>,
  engine: Engine,
): () => Promise<[Storage, Storage]> {
  const opened: Storage[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
  });
  return async () => {
    const url = await databases.newDatabaseUrl(engine);
    const storages = await Promise.all([openStorage(url, { poolSize: 4 }), openStorage(url, { poolSize: 4 })]);
    opened.push(...storages);
    return storages;
  };
}
