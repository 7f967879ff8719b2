import { setTimeout as sleep } from "node:timers/promises";
import { readMigrationFiles } from "drizzle-orm/migrator";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { newPrepaidCode, hashPrepaidCode } from "../../prepaid/prepaid-code";
import { migrationsFolder } from "../migrations";
import { openStorage } from "../open-storage";
import type { Storage } from "../storage";
import { useTestDatabases } from "../../../cli/dev-stack/test-databases";

const MODEL = "vendor-a/gpt-6-luna";
const databases = useTestDatabases();

/** Each key's count of reserved tokens beside what its reservation rows hold. */
async function counts(url: string): Promise<{ id: string; counted: string; held: string }[]> {
  const client = new pg.Client(url);
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; counted: string; held: string }>(
      `select k.id, k.reserved_tokens as counted,
        (select coalesce(sum(r.tokens), 0) from prepaid_reservations r where r.key_id = k.id) as held
      from prepaid_keys k order by k.id`,
    );
    return rows;
  } finally {
    await client.end();
  }
}

describe("the count of reserved tokens on PostgreSQL (migration 0002)", () => {
  const opened: Storage[] = [];
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((storage) => storage.close()));
  });
  const open = async (url: string) => {
    const storage = await openStorage(url, { poolSize: 4 });
    opened.push(storage);
    return storage;
  };

  it("is taken from the reservations of a database migrated before it, which then reserves against it", async () => {
    const url = await databases.newDatabaseUrl("postgresql");
    const client = new pg.Client(url);
    await client.connect();
    try {
      // The database as the migrations before 0002 left it, recorded as our migrator records them.
      await client.query("create schema drizzle");
      await client.query(
        "create table drizzle.__drizzle_migrations (id serial primary key, hash text not null, created_at bigint)",
      );
      const before = readMigrationFiles({ migrationsFolder: migrationsFolder("postgresql") }).slice(0, 2);
      for (const migration of before) {
        for (const statement of migration.sql) if (statement.trim()) await client.query(statement);
        await client.query("insert into drizzle.__drizzle_migrations (hash, created_at) values ($1, $2)", [
          migration.hash,
          migration.folderMillis,
        ]);
      }
      const code = newPrepaidCode();
      await client.query(
        `insert into prepaid_keys (code_hash, model, total_tokens, status, created_at, updated_at)
          values ($1, $2, 100, 'active', now(), now())`,
        [hashPrepaidCode(code), MODEL],
      );
      await client.query(
        `insert into prepaid_reservations (key_id, id, tokens, expires_at, created_at)
          values (1, 1, 30, now() + interval '1 hour', now()), (1, 2, 25, now() + interval '1 hour', now())`,
      );
      const storage = await open(url);
      expect(await counts(url)).toEqual([{ id: "1", counted: "55", held: "55" }]);
      const reservation = await storage.prepaidKeys.reserve(
        code,
        MODEL,
        { inputTokens: 5, maxOutputTokens: 100 },
        60_000,
      );
      expect(reservation?.allowedOutput).toBe(40);
    } finally {
      await client.end();
    }
  });

  it("stays equal to what the reservations hold through reserving, settling, expiry and sweeps on two instances", async () => {
    const url = await databases.newDatabaseUrl("postgresql");
    const [first, second] = [await open(url), await open(url)];
    const stores = [first.prepaidKeys, second.prepaidKeys];
    const codes = [newPrepaidCode(), newPrepaidCode()];
    for (const code of codes) await first.prepaidKeys.issue(code, MODEL, 300, undefined);
    // 60 calls over two keys and two instances: some expire before they settle, some never settle, some are
    // released; a sweep runs among them.
    const calls = Array.from({ length: 60 }, async (_, index) => {
      const store = stores[index % 2]!;
      const code = codes[Math.floor(index / 2) % 2]!;
      const ttlMs = index % 3 === 0 ? 1 : 60_000;
      const reservation = await store.reserve(code, MODEL, { inputTokens: 4, maxOutputTokens: 8 }, ttlMs);
      if (!reservation || index % 5 === 0) return;
      await sleep(index % 4);
      await store.settle(reservation, index % 7 === 0 ? 0 : 10);
    });
    await Promise.all([...calls, sleep(3).then(() => second.prepaidKeys.deleteExpired())]);
    const afterCalls = await counts(url);
    expect(afterCalls.every((key) => key.counted === key.held)).toBe(true);
    await sleep(5);
    await first.prepaidKeys.deleteExpired();
    for (const key of await counts(url)) {
      const balance = await first.prepaidKeys.balance(Number(key.id));
      expect(key.counted).toBe(key.held);
      expect(Number(key.counted)).toBe(balance.reserved);
      expect(balance.used + balance.reserved).toBeLessThanOrEqual(300);
    }
  });
});
