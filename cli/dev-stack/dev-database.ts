import { join } from "node:path";
import { databaseLocation, redactedDatabaseUrl } from "../../config/database-url";
import type { LaunchConfig } from "../../config/dev-launch-config";
import { startLocalPostgres, type LocalPostgres } from "./local-postgres";
import { fileNameFor } from "../lib/deployment-config";

export type DevEngine = "sqlite" | "postgres";

/** The database of each network `paysvc dev` runs, and the embedded PostgreSQL server it started, if any. */
export interface DevDatabases {
  /** DATABASE_URL per network id. */
  urls: Map<string, string>;
  postgres?: LocalPostgres;
}

/**
 * Where each network's state lives. SQLite: the configured file for one network, a file per network for several.
 * PostgreSQL: the server DATABASE_URL names (one network only: each network needs a database of its own), or else
 * an embedded server under DATA_DIR/postgres, with a database per network.
 */
export async function devDatabases(
  base: LaunchConfig,
  networks: string[],
  engine: DevEngine | undefined,
  say: (line: string) => void,
): Promise<DevDatabases> {
  const configured = base.configured.databaseUrlSet ? databaseLocation(base.configured.databaseUrl).engine : undefined;
  const wanted = engine === "postgres" ? "postgresql" : engine;
  if (configured && wanted && configured !== wanted) {
    throw new Error(
      `DATABASE_URL names a ${configured} database; leave out --database ${engine}, or unset DATABASE_URL`,
    );
  }
  const urls = new Map<string, string>();
  const several = networks.length > 1;
  if (configured === "postgresql") {
    if (several)
      throw new Error(
        "DATABASE_URL names one PostgreSQL database; each network needs its own: run one network per DATABASE_URL",
      );
    urls.set(networks[0]!, base.configured.databaseUrl);
    return { urls };
  }
  if (wanted !== "postgresql") {
    for (const network of networks) {
      urls.set(network, several ? `file:${base.dataDir}/${fileNameFor(network)}.sqlite` : base.configured.databaseUrl);
    }
    return { urls };
  }
  const dataDir = join(base.dataDir, "postgres");
  const postgres = await startLocalPostgres({ dataDir, port: base.localPorts.postgres });
  try {
    for (const network of networks) {
      const name = several ? `paysvc_${fileNameFor(network).replace(/-/g, "_")}` : "paysvc";
      await postgres.createDatabase(name);
      urls.set(network, postgres.url(name));
    }
  } catch (error) {
    await postgres.stop();
    throw error;
  }
  say(
    `postgres     ${redactedDatabaseUrl(postgres.url(several ? "<network>" : "paysvc"))}  (embedded PostgreSQL, data in ${postgres.dataDir})`,
  );
  return { urls, postgres };
}
