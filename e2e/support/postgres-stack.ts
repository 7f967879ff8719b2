import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { loadLaunchConfig } from "../../config/dev-launch-config";
import { startLocalPostgres } from "../../cli/dev-stack/local-postgres";
import { startStack, type StackOptions } from "../../cli/dev-stack/start-stack";
import { FREE_PORTS } from "./free-ports";

/**
 * A complete embedded deployment of `network` whose `instances` app processes share one real PostgreSQL server,
 * as `paysvc dev --database postgres --instances N` runs it; `query` reads that database directly.
 */
export async function startPostgresStack(network: string, options: StackOptions = {}) {
  const dataDir = mkdtempSync(join(tmpdir(), "paysvc-postgres-e2e-"));
  // PostgreSQL runs as an unprivileged user when we are root: it must reach its data directory.
  chmodSync(dataDir, 0o755);
  const postgres = await startLocalPostgres({ dataDir: join(dataDir, "postgres"), port: 0 });
  await postgres.createDatabase("paysvc");
  const databaseUrl = postgres.url("paysvc");
  const appLog: string[] = [];
  let stack;
  try {
    stack = await startStack(
      loadLaunchConfig({ NETWORK: network, ...FREE_PORTS, DATA_DIR: dataDir, DATABASE_URL: databaseUrl }),
      {
        onAppLogLine: (line) => appLog.push(line),
        ...options,
      },
    );
  } catch (error) {
    await postgres.stop();
    throw error;
  }
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return {
    stack,
    databaseUrl,
    appLog,
    async query<Row extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<Row[]> {
      return (await client.query<Row>(text, values)).rows;
    },
    remove: async () => {
      await client.end();
      await stack.stop();
      await postgres.stop();
      if (process.env.PAYSVC_E2E_SHOW_APP_LOG === "1") console.log(appLog.join("\n"));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
