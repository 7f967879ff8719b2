import { drizzle, type NodePgDatabase } from "drizzle-orm/node-postgres";
import pg from "pg";
import { logEvent } from "../../core/log";
import { redactedDatabaseUrl } from "../../../config/database-url";
import { pendingMigrations } from "../migrations";
import * as schema from "./schema";

export type PostgresDatabase = NodePgDatabase<typeof schema> & { $client: pg.Pool };

/** Any fixed number: the key of the advisory lock that lets one process at a time migrate. */
const MIGRATION_LOCK = 4_020_402;

export class DatabaseUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "DatabaseUnavailableError";
  }
}

export interface PoolOptions {
  /** Connections; callers beyond it queue for one. */
  poolSize: number;
  /**
   * How long a query waits for a connection, then for its answer, before it fails; unbounded when undefined. A
   * statement that timed out has its connection closed (the server rolls back what it had not committed).
   */
  timeoutMs?: number;
}

/**
 * A pool of connections to the PostgreSQL server at `url`, migrated. Fails with a message naming the server (never
 * its password) when it cannot be reached. A server that stops or restarts costs the queries of its outage: the
 * pool replaces the connections it lost on the next queries, with no restart of the process.
 */
export async function openPostgres(url: string, options: PoolOptions): Promise<PostgresDatabase> {
  const { poolSize, timeoutMs } = options;
  const pool = new pg.Pool({
    connectionString: url,
    max: poolSize,
    connectionTimeoutMillis: timeoutMs ?? 10_000,
    // A server gone without a word (a paused process, a lost host) is found out by TCP rather than never.
    keepAlive: true,
    ...(timeoutMs === undefined ? {} : { query_timeout: timeoutMs }),
  });
  // An idle connection the server dropped (a restart, a failover) is replaced on the next query; without a
  // listener its error would end the process.
  pool.on("error", (error) => logEvent("warn", "database_connection_lost", { error: error.message }));
  try {
    await migrate(new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs ?? 10_000 }));
  } catch (error) {
    await pool.end().catch(() => undefined);
    const { code, message } = error as { code?: string; message: string };
    throw new DatabaseUnavailableError(
      `DATABASE_URL: cannot use the PostgreSQL database at ${redactedDatabaseUrl(url)}: ${message}${code ? ` (${code})` : ""}`,
    );
  }
  return drizzle(pool, { schema }) as PostgresDatabase;
}

/**
 * Applies the pending migrations in one transaction that first takes an advisory lock: a second process starting
 * at once waits for it, then finds nothing left to do. The record table is the one drizzle's migrator keeps.
 */
async function migrate(client: pg.Client): Promise<void> {
  // Its own connection, with no statement timeout: the lock may wait for another process's migrations.
  await client.connect();
  try {
    await client.query("begin");
    await client.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await client.query("create schema if not exists drizzle");
    await client.query(
      "create table if not exists drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)",
    );
    const { rows } = await client.query<{ last: string | null }>(
      "select max(created_at) as last from drizzle.__drizzle_migrations",
    );
    const last = rows[0]?.last;
    for (const migration of pendingMigrations("postgresql", last == null ? undefined : Number(last))) {
      for (const statement of migration.sql) if (statement.trim()) await client.query(statement);
      await client.query("insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)", [
        migration.hash,
        migration.folderMillis,
      ]);
    }
    await client.query("commit");
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}
