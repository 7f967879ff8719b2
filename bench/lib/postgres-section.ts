import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { childEnvironment } from "../../config/env";
import type { GuardedProcess } from "../../cli/dev-stack/guarded-process";
import { startLocalPostgres, type LocalPostgres } from "../../cli/dev-stack/local-postgres";
import { freePort, startNextApp } from "../../cli/dev-stack/next-app";
import { cpuMs, machineCpuTicks } from "./process-cpu";
import { ms, percentile, rotate, runConcurrently } from "./stats";
import { sustainedRate } from "./sustained-rate";

/** The bench stack: its SQLite app, and the chain, facilitator and upstream the PostgreSQL apps share. */
type BenchStack = {
  appUrl: string;
  chainRpcUrl?: string;
  facilitatorUrl: string;
  facilitatorAuthHeader: string | undefined;
  upstreamBaseUrl: string;
  payTo: string;
};

/** A PostgreSQL server and three app processes over one database of it; the last one with a pool of 5. */
export interface PostgresApps {
  first: string;
  second: string;
  smallPool: string;
  /** Stops the apps and the server, and removes its data. */
  stop(): Promise<void>;
}

export async function startPostgresApps(stack: BenchStack): Promise<PostgresApps> {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-bench-postgres-"));
  const apps: GuardedProcess[] = [];
  let postgres: LocalPostgres | undefined;
  const stop = async () => {
    for (const app of apps) await app.stop().catch(() => undefined);
    await postgres?.stop().catch(() => undefined);
    rmSync(directory, { recursive: true, force: true });
    // Where nobody could not reach our directory, the server kept its data in the temporary directory instead.
    if (postgres && !postgres.dataDir.startsWith(directory)) rmSync(postgres.dataDir, { recursive: true, force: true });
  };
  try {
    chmodSync(directory, 0o755); // as root, PostgreSQL runs as nobody, who must reach its data directory
    postgres = await startLocalPostgres({ dataDir: join(directory, "postgres"), port: 0 });
    await postgres.createDatabase("paysvc");
    const env = childEnvironment({
      NETWORK: "eip155:137",
      CHAIN_RPC_URL: stack.chainRpcUrl ?? "",
      FACILITATOR_URL: stack.facilitatorUrl,
      FACILITATOR_AUTH_HEADER: stack.facilitatorAuthHeader ?? "",
      PAY_TO: stack.payTo,
      UPSTREAM_BASE_URL: stack.upstreamBaseUrl,
      DATABASE_URL: postgres.url("paysvc"),
      NODE_ENV: "production",
    });
    // Started together (each migrates under the database's lock, so only the first one does); every one that
    // started is stopped, even if another failed.
    const starting = await Promise.allSettled(
      [env, env, { ...env, DATABASE_POOL_SIZE: "5" }].map(async (appEnv) => {
        const app = await startNextApp({ host: "127.0.0.1", port: await freePort(), env: appEnv });
        apps.push(app);
        return app.url;
      }),
    );
    const failure = starting.find((outcome) => outcome.status === "rejected");
    if (failure) throw failure.reason;
    const [first, second, smallPool] = starting.map((outcome) => (outcome as PromiseFulfilledResult<string>).value);
    return { first: first!, second: second!, smallPool: smallPool!, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface PostgresSectionInput {
  stack: BenchStack;
  apps: PostgresApps;
  /** The JSON body of the prepaid chat completion every call sends. */
  body: string;
  /** A prepaid key of `tokens` bought at `appUrl`. */
  buyKey(appUrl: string, tokens: number): Promise<string>;
  /** One prepaid chat completion at `appUrl`; its Server-Timing phases. Throws unless it answers 200. */
  prepaidCall(appUrl: string, key: string): Promise<Record<string, number>>;
  pidOf(appUrl: string): number | undefined;
  say(line: string): void;
  quick: boolean;
}

type Section = PostgresSectionInput & { size(full: number, small: number): number };

/**
 * Section 7: the same prepaid call on PostgreSQL beside SQLite, two instances over one PostgreSQL against one, and
 * a pool of 5 connections under 200 concurrent calls (50 in quick mode).
 */
export async function postgresSection(input: PostgresSectionInput): Promise<void> {
  const section: Section = { ...input, size: (full, small) => (input.quick ? small : full) };
  const { first, second, smallPool } = input.apps;
  input.say(`\n## 7. PostgreSQL 18 on the same machine (a second app process over it) beside SQLite`);
  await besideSqlite(section, first);
  const keys = await buyKeys(section, first, section.size(8, 2));
  await instances(section, [first, second], keys);
  await smallPoolBurst(section, smallPool, keys);
}

/** The same prepaid call at concurrency 1 on the SQLite app and on a PostgreSQL one, in turn. */
async function besideSqlite(section: Section, postgresApp: string) {
  const { stack, size, say } = section;
  const sqliteKey = await section.buyKey(stack.appUrl, 1_000_000);
  const postgresKey = await section.buyKey(postgresApp, 1_000_000);
  const phases = { sqlite: [] as Record<string, number>[], postgres: [] as Record<string, number>[] };
  const onSqlite = async () => phases.sqlite.push(await section.prepaidCall(stack.appUrl, sqliteKey));
  const onPostgres = async () => phases.postgres.push(await section.prepaidCall(postgresApp, postgresKey));
  // The SQLite app is warm from the sections before; the new one takes 1,500-2,000 calls to reach its steady cost.
  await runConcurrently(size(2000, 4), 4, onPostgres);
  await rotate(size(200, 2), [onSqlite, onPostgres]);
  phases.sqlite.length = phases.postgres.length = 0;
  const [sqlite = [], postgres = []] = await rotate(size(2000, 10), [onSqlite, onPostgres]);
  const p50 = (engine: keyof typeof phases, name: string) =>
    percentile(
      phases[engine].map((timings) => timings[name] ?? Number.NaN),
      50,
    );
  const added = percentile(postgres, 50) - percentile(sqlite, 50);
  say(
    `prepaid chat, concurrency 1 (in turn, ${sqlite.length} each): PostgreSQL p50 ${ms(percentile(postgres, 50))} p99 ${ms(percentile(postgres, 99))}, SQLite p50 ${ms(percentile(sqlite, 50))} p99 ${ms(percentile(sqlite, 99))}; PostgreSQL adds p50 ${ms(added)} (target <= 1 ms)`,
  );
  say(
    `Server-Timing p50, PostgreSQL (SQLite): reserve ${ms(p50("postgres", "reserve"))} (${ms(p50("sqlite", "reserve"))}), settle ${ms(p50("postgres", "settle"))} (${ms(p50("sqlite", "settle"))}); together they add ${ms(p50("postgres", "reserve") + p50("postgres", "settle") - p50("sqlite", "reserve") - p50("sqlite", "settle"))}`,
  );
}

/** Keys bought one after the other: the payer's payments settle one at a time. */
async function buyKeys(section: Section, appUrl: string, count: number): Promise<string[]> {
  const keys: string[] = [];
  for (let index = 0; index < count; index++) keys.push(await section.buyKey(appUrl, 1_000_000));
  return keys;
}

/**
 * Requests per second of one instance at 32 connections, and of two over the same database at 16 each, driven by
 * autocannon (cheaper for this process than fetch). Each request takes the next of `keys`: calls on one key queue
 * for its row lock, which is not what is measured here. Blocks alternate; the first round warms both up.
 */
async function instances(section: Section, urls: string[], keys: string[]) {
  const { size, say, quick } = section;
  let next = 0;
  const headersFor = () => ({ authorization: `Bearer ${keys[next++ % keys.length]}` });
  const drive = (url: string, connections: number) =>
    sustainedRate({
      url: `${url}/v1/chat/completions`,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: section.body,
      connections,
      seconds: size(3, 1),
      status: 200,
      headersFor,
    });
  const pids = urls.map((url) => section.pidOf(url));
  if (pids.some((pid) => pid === undefined)) throw new Error("a PostgreSQL app's process was not found");
  const cpu = () => pids.reduce((sum: number, pid) => sum + cpuMs(pid!), 0);
  const rates = { one: [] as number[], two: [] as number[] };
  const cpuPerCall = { one: [] as number[], two: [] as number[] };
  const machineBusy = { one: [] as number[], two: [] as number[] };
  for (let round = quick ? 1 : 0; round <= size(3, 1); round++) {
    for (const name of ["one", "two"] as const) {
      const cpuBefore = cpu();
      const machineBefore = machineCpuTicks();
      const runs = await Promise.all(name === "one" ? [drive(urls[0]!, 32)] : urls.map((url) => drive(url, 16)));
      if (round === 0) continue;
      const answered = runs.reduce((sum, run) => sum + run.answered, 0);
      rates[name].push(runs.reduce((sum, run) => sum + run.perSecond, 0));
      cpuPerCall[name].push((cpu() - cpuBefore) / answered);
      const machine = machineCpuTicks();
      machineBusy[name].push((machine.busy - machineBefore.busy) / (machine.total - machineBefore.total));
    }
  }
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  const [one, two] = [mean(rates.one), mean(rates.two)];
  const busy = (name: "one" | "two") => `${(100 * mean(machineBusy[name])).toFixed(0)} %`;
  say(
    `concurrency 32, prepaid chat over ${keys.length} keys: one instance ${one.toFixed(0)} req/s, two instances ${two.toFixed(0)} req/s, ratio ${(two / one).toFixed(2)}; os.cpus().length ${cpus().length}; app CPU per call ${ms(mean(cpuPerCall.one))} (two instances: ${ms(mean(cpuPerCall.two))})`,
  );
  say(
    `the ceiling: CPU-bound, the machine's ${cpus().length} cores were ${busy("one")} busy with one instance (${busy("two")} with two), shared by the load generator, the upstream, PostgreSQL and the apps: a second instance adds a process, not a core`,
  );
}

/** More calls at once than the pool has connections: they queue for one, and all must be served. */
async function smallPoolBurst(section: Section, appUrl: string, keys: string[]) {
  const { size, say } = section;
  const burst = size(200, 50);
  await runConcurrently(size(200, 10), 8, (index) => section.prepaidCall(appUrl, keys[index % keys.length]!));
  const outcomes = await Promise.all(
    Array.from({ length: burst }, async (_, index) => {
      const began = performance.now();
      const error = await section.prepaidCall(appUrl, keys[index % keys.length]!).then(
        () => undefined,
        (failure: Error) => failure.message,
      );
      return { ms: performance.now() - began, error };
    }),
  );
  const durations = outcomes.map((outcome) => outcome.ms);
  const errors = outcomes.flatMap((outcome) => (outcome.error === undefined ? [] : [outcome.error]));
  say(
    `DATABASE_POOL_SIZE=5, ${burst} concurrent prepaid calls (Promise.all, over ${keys.length} keys): ${burst - errors.length} succeeded, ${errors.length} errors${errors.length ? ` (first: ${errors[0]})` : ""}; p50 ${ms(percentile(durations, 50))}, p99 ${ms(percentile(durations, 99))}, max ${ms(Math.max(...durations))}`,
  );
}
