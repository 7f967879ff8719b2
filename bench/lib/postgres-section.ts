import { chmodSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { childEnvironment } from "../../config/env";
import { startLocalPostgres } from "../../server/local-stack/local-postgres";
import { freePort, startNextApp } from "../../server/local-stack/next-app";
import { cpuMs } from "./process-cpu";
import { ms, percentile, rotate, runConcurrently } from "./stats";

export interface PostgresSectionInput {
  /** The bench stack: its SQLite app, and the chain, facilitator and upstream the PostgreSQL apps share. */
  stack: { appUrl: string; chainRpcUrl?: string; facilitatorUrl: string; upstreamBaseUrl: string; payTo: string };
  /** A prepaid key of `tokens` bought at `appUrl`. */
  buyKey(appUrl: string, tokens: number): Promise<string>;
  /** One prepaid chat completion at `appUrl`; its Server-Timing phases. */
  prepaidCall(appUrl: string, key: string): Promise<Record<string, number>>;
  pidOf(appUrl: string): number | undefined;
  say(line: string): void;
  quick: boolean;
}

/**
 * Section 7: the same prepaid call on PostgreSQL beside SQLite, two instances over one PostgreSQL against one, and
 * a pool of 5 connections under 200 concurrent calls. The PostgreSQL server and its apps are started here, over
 * the stack's chain, facilitator and upstream, and stopped at the end.
 */
export async function postgresSection(input: PostgresSectionInput): Promise<void> {
  const { stack, say, quick } = input;
  const size = (full: number, small: number) => (quick ? small : full);
  const directory = mkdtempSync(join(tmpdir(), "paysvc-bench-postgres-"));
  chmodSync(directory, 0o755); // PostgreSQL runs as nobody when we are root
  const postgres = await startLocalPostgres({ dataDir: join(directory, "postgres"), port: 0 });
  const apps: { stop(): Promise<void> }[] = [];
  try {
    await postgres.createDatabase("paysvc");
    const env = (extra: Record<string, string> = {}) =>
      childEnvironment({
        NETWORK: "eip155:137",
        CHAIN_RPC_URL: stack.chainRpcUrl ?? "",
        FACILITATOR_URL: stack.facilitatorUrl,
        PAY_TO: stack.payTo,
        UPSTREAM_BASE_URL: stack.upstreamBaseUrl,
        DATABASE_URL: postgres.url("paysvc"),
        NODE_ENV: "production",
        ...extra,
      });
    const start = async (extra?: Record<string, string>) => {
      const app = await startNextApp({ host: "127.0.0.1", port: await freePort(), env: env(extra) });
      apps.push(app);
      return app.url;
    };
    const [first, second, smallPool] = [await start(), await start(), await start({ DATABASE_POOL_SIZE: "5" })];
    say(`\n## 7. PostgreSQL (${postgres.url("paysvc").replace(/:[^:@/]*@/, ":***@")}, PostgreSQL 18, same machine)`);

    // The same prepaid call on each engine, in turn, so that both see the same load.
    const sqliteKey = await input.buyKey(stack.appUrl, 1_000_000);
    const postgresKey = await input.buyKey(first!, 1_000_000);
    const phases = { sqlite: [] as Record<string, number>[], postgres: [] as Record<string, number>[] };
    const onSqlite = async () => phases.sqlite.push(await input.prepaidCall(stack.appUrl, sqliteKey));
    const onPostgres = async () => phases.postgres.push(await input.prepaidCall(first!, postgresKey));
    await rotate(size(500, 3), [onSqlite, onPostgres]);
    phases.sqlite.length = phases.postgres.length = 0;
    const [sqlite, pg] = await rotate(size(2000, 10), [onSqlite, onPostgres]);
    const phase = (engine: keyof typeof phases, name: string) =>
      ms(
        percentile(
          phases[engine].map((timings) => timings[name] ?? Number.NaN),
          50,
        ),
      );
    say(
      `prepaid chat, concurrency 1 (in turn, ${sqlite!.length} each): SQLite p50 ${ms(percentile(sqlite!, 50))} p99 ${ms(percentile(sqlite!, 99))}; PostgreSQL p50 ${ms(percentile(pg!, 50))} p99 ${ms(percentile(pg!, 99))}; PostgreSQL adds p50 ${ms(percentile(pg!, 50) - percentile(sqlite!, 50))} (target <= 1 ms)`,
    );
    say(
      `Server-Timing p50: reserve ${phase("sqlite", "reserve")} on SQLite, ${phase("postgres", "reserve")} on PostgreSQL; settle ${phase("sqlite", "settle")} and ${phase("postgres", "settle")}`,
    );

    // Throughput at concurrency 32: one instance, then two over the same database (calls alternate between them).
    const total = size(3000, 64);
    const call = (urls: string[]) => (index: number) => input.prepaidCall(urls[index % urls.length]!, postgresKey);
    await runConcurrently(size(200, 8), 32, call([first!, second!]));
    const cpu = () => [first!, second!].reduce((sum, url) => sum + cpuMs(input.pidOf(url) ?? 0), 0);
    const cpuBefore = cpu();
    const one = await runConcurrently(total, 32, call([first!]));
    const cpuOne = (cpu() - cpuBefore) / total;
    const two = await runConcurrently(total, 32, call([first!, second!]));
    say(
      `concurrency 32, ${total} calls: one instance ${one.perSecond.toFixed(0)} req/s, two instances ${two.perSecond.toFixed(0)} req/s, ratio ${(two.perSecond / one.perSecond).toFixed(2)} on ${cpus().length} cores; app CPU per call ${ms(cpuOne)}`,
    );
    say(
      `the ceiling: the load generator, the upstream, the facilitator's chain, PostgreSQL and the apps share ${cpus().length} cores; one instance already keeps them busy, so a second adds processes, not cores`,
    );

    // Pool exhaustion: more calls at once than connections; they queue for one.
    const burst = size(200, 50);
    const outcomes = await Promise.all(
      Array.from({ length: burst }, async () => {
        const began = performance.now();
        try {
          await input.prepaidCall(smallPool!, postgresKey);
          return { ok: true, ms: performance.now() - began };
        } catch (error) {
          return { ok: false, ms: performance.now() - began, error: (error as Error).message };
        }
      }),
    );
    const durations = outcomes.map((outcome) => outcome.ms);
    const failed = outcomes.filter((outcome) => !outcome.ok);
    say(
      `DATABASE_POOL_SIZE=5, ${burst} concurrent prepaid calls: ${burst - failed.length} succeeded, ${failed.length} failed${failed.length ? ` (${failed[0]!.error})` : ""}; p50 ${ms(percentile(durations, 50))}, p99 ${ms(percentile(durations, 99))}, max ${ms(Math.max(...durations))}`,
    );
  } finally {
    for (const app of apps) await app.stop();
    await postgres.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}
