import { execFileSync } from "node:child_process";
import { wrapFetchWithPayment } from "@x402/fetch";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExtraApp } from "./support/extra-app";
import { payingClient } from "./support/network-stack";
import { buyPrepaidCode, stack } from "./support/payments";
import { startPostgresStack } from "./support/postgres-stack";
import { stalledStream } from "./support/stalled-stream";

/**
 * The lease of a prepaid reservation (PREPAID_RESERVATION_TTL_SECONDS, 30 by default): what a dead process may hold.
 * Set short here, since the test waits out two and a half of them; a live call renews its lease every third of it.
 */
const LEASE_SECONDS = 10;
const leaseSetting = { PREPAID_RESERVATION_TTL_SECONDS: String(LEASE_SECONDS) };

type KeyTokens = { total: number; used: number; reserved: number; remaining: number };
const keyTokens = async (url: string, code: string) =>
  (
    (await (await fetch(`${url}/v1/prepaid/status`, { headers: { authorization: `Bearer ${code}` } })).json()) as {
      tokens: KeyTokens;
    }
  ).tokens;

/** The app server itself on the URL's port (not the guard whose command line names it too). */
const serverPid = (url: string) =>
  Number(
    execFileSync("pgrep", ["-f", `^${process.execPath} \\S*app/serve\\.mjs --port ${new URL(url).port} `], {
      encoding: "utf8",
    }).trim(),
  );

/**
 * Two app processes over one database, each streaming for a key of its own; the second is killed (SIGKILL) while
 * its call runs. Its reservation must stop counting within 60 s, while the live call's, renewed, stays held past
 * twice the lease. `status` reads a key through a process that stays up.
 */
async function deadAndLive(options: { live: string; dead: string; status: string; liveKey: string; deadKey: string }) {
  const live = await stalledStream(options.live, options.liveKey);
  const dead = await stalledStream(options.dead, options.deadKey);
  try {
    expect((await keyTokens(options.status, options.deadKey)).reserved).toBeGreaterThan(0);
    const killedAt = Date.now();
    process.kill(serverPid(options.dead), "SIGKILL");
    let freedAfterMs: number | undefined;
    while (Date.now() - killedAt < 2.5 * LEASE_SECONDS * 1000) {
      if (freedAfterMs === undefined && (await keyTokens(options.status, options.deadKey)).reserved === 0) {
        freedAfterMs = Date.now() - killedAt;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    const deadTokens = await keyTokens(options.status, options.deadKey);
    const liveTokens = await keyTokens(options.status, options.liveKey);
    return { freedAfterMs, deadTokens, liveTokens };
  } finally {
    live.close();
    dead.close();
  }
}

describe("a prepaid reservation's lease", () => {
  let postgres: Awaited<ReturnType<typeof startPostgresStack>>;
  let extraApps: Awaited<ReturnType<typeof startExtraApp>>[] = [];
  beforeAll(async () => {
    postgres = await startPostgresStack("eip155:137", { instances: 2, appEnv: leaseSetting });
    // Two more app processes over the shared stack's SQLite file.
    extraApps = [await startExtraApp(leaseSetting), await startExtraApp(leaseSetting)];
  });
  afterAll(async () => {
    for (const app of extraApps) await app.stop();
    await postgres?.remove();
  });

  it("is freed within two leases of its process's death on both engines, and renewed for as long as a live call runs", async () => {
    const buyOnPostgres = async () => {
      const [url] = postgres.stack.instances.map((instance) => instance.url);
      const paidFetch = wrapFetchWithPayment(fetch, payingClient(postgres.stack, postgres.stack.payers[1]!.privateKey));
      const response = await paidFetch(`${url}/prepaid/codes`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "vendor-a/gpt-6-luna", tokens: 100_000 }),
      });
      expect(response.status).toBe(201);
      return ((await response.json()) as { code: string }).code;
    };
    const buyOnSqlite = async () =>
      (await buyPrepaidCode(stack().payers[1]!.privateKey, { model: "vendor-a/gpt-6-luna", tokens: 100_000 })).code;
    const [postgresUrls, sqliteUrls] = [
      postgres.stack.instances.map((instance) => instance.url),
      extraApps.map((app) => app.url),
    ];
    const results = await Promise.all([
      (async () =>
        deadAndLive({
          live: postgresUrls[0]!,
          dead: postgresUrls[1]!,
          status: postgresUrls[0]!,
          liveKey: await buyOnPostgres(),
          deadKey: await buyOnPostgres(),
        }))(),
      (async () =>
        deadAndLive({
          live: sqliteUrls[0]!,
          dead: sqliteUrls[1]!,
          status: stack().appUrl,
          liveKey: await buyOnSqlite(),
          deadKey: await buyOnSqlite(),
        }))(),
    ]);
    for (const [engine, result] of [
      ["postgresql", results[0]],
      ["sqlite", results[1]],
    ] as const) {
      expect(result.freedAfterMs, engine).toBeDefined();
      expect(result.freedAfterMs!, engine).toBeLessThan(2 * LEASE_SECONDS * 1000);
      // Nothing was charged for the dead call; the live one still holds its budget, two leases on.
      expect(result.deadTokens, engine).toEqual({ total: 100_000, used: 0, reserved: 0, remaining: 100_000 });
      expect(result.liveTokens.reserved, engine).toBeGreaterThan(0);
      expect(result.liveTokens.used, engine).toBe(0);
    }
  }, 150_000);
});
