import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { readMigrationFiles } from "drizzle-orm/migrator";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { databaseLocation, type Engine } from "../../config/database-url";
import { newPrepaidCode, hashPrepaidCode } from "../prepaid/prepaid-code";
import { migrationsFolder } from "./migrations";
import { openStorage } from "./open-storage";
import type { Storage } from "./storage";
import { engines, useTestDatabases } from "../../cli/dev-stack/test-databases";

const MODEL = "vendor-a/gpt-6-luna";
const databases = useTestDatabases();

/** The database of `url` reached without the app's code: statements with ? placeholders, rows as the engine gives. */
async function rawDatabase(engine: Engine, url: string) {
  if (engine === "sqlite") {
    const location = databaseLocation(url);
    const client = new Database(location.engine === "sqlite" ? location.path : url);
    return {
      query: async (text: string, values: unknown[] = []) => {
        const statement = client.prepare(text);
        return statement.reader
          ? (statement.all(...values) as Record<string, unknown>[])
          : (statement.run(...values), []);
      },
      close: async () => void client.close(),
    };
  }
  const client = new pg.Client(url);
  await client.connect();
  let placeholder = 0;
  return {
    query: async (text: string, values: unknown[] = []) =>
      (
        await client
          .query(
            text.replace(/\?/g, () => `$${++placeholder}`),
            values,
          )
          .finally(() => (placeholder = 0))
      ).rows as Record<string, unknown>[],
    close: () => client.end(),
  };
}

/** Each key's count of reserved tokens beside what its reservation rows hold. */
async function counts(engine: Engine, url: string): Promise<{ id: number; counted: number; held: number }[]> {
  const database = await rawDatabase(engine, url);
  try {
    const rows = await database.query(
      `select k.id, k.reserved_tokens as counted,
        (select coalesce(sum(r.tokens), 0) from prepaid_reservations r where r.key_id = k.id) as held
      from prepaid_keys k order by k.id`,
    );
    return rows.map((row) => ({ id: Number(row.id), counted: Number(row.counted), held: Number(row.held) }));
  } finally {
    await database.close();
  }
}

/** The migrations before the one that added the count: PostgreSQL's 0002, SQLite's 0008. */
const beforeTheCount: Record<Engine, number> = { postgresql: 2, sqlite: 8 };

describe.each(engines)("the count of reserved tokens of a key on %s", (engine) => {
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
    const url = await databases.newDatabaseUrl(engine);
    const database = await rawDatabase(engine, url);
    try {
      // The database as the migrations before the count left it, recorded as our migrator records them.
      const record = engine === "sqlite" ? "__drizzle_migrations" : "drizzle.__drizzle_migrations";
      if (engine === "postgresql") await database.query("create schema drizzle");
      await database.query(
        `create table ${record} (id ${engine === "sqlite" ? "integer" : "serial"} primary key, hash text not null, created_at bigint)`,
      );
      const before = readMigrationFiles({ migrationsFolder: migrationsFolder(engine) }).slice(
        0,
        beforeTheCount[engine],
      );
      for (const migration of before) {
        for (const statement of migration.sql) if (statement.trim()) await database.query(statement);
        await database.query(`insert into ${record} (hash, created_at) values (?, ?)`, [
          migration.hash,
          migration.folderMillis,
        ]);
      }
      const code = newPrepaidCode();
      const now = engine === "sqlite" ? Date.now() : new Date();
      const later = engine === "sqlite" ? Date.now() + 3_600_000 : new Date(Date.now() + 3_600_000);
      await database.query(
        `insert into prepaid_keys (code_hash, model, total_tokens, status, created_at, updated_at)
          values (?, ?, 100, 'active', ?, ?)`,
        [hashPrepaidCode(code), MODEL, now, now],
      );
      await database.query(
        `insert into prepaid_reservations (key_id, id, tokens, expires_at, created_at)
          values (1, 1, 30, ?, ?), (1, 2, 25, ?, ?)`,
        [later, now, later, now],
      );
      await database.close();
      const storage = await open(url);
      expect(await counts(engine, url)).toEqual([{ id: 1, counted: 55, held: 55 }]);
      const reservation = await storage.prepaidKeys.reserve(
        code,
        MODEL,
        { inputTokens: 5, maxOutputTokens: 100 },
        60_000,
      );
      expect(reservation?.allowedOutput).toBe(40);
      expect(await storage.prepaidKeys.balance(1)).toEqual({ total: 100, used: 0, reserved: 100, remaining: 0 });
    } finally {
      await database.close().catch(() => undefined);
    }
  });

  it("stays equal to what the reservations hold through reserving, settling, expiry and sweeps on two instances", async () => {
    const url = await databases.newDatabaseUrl(engine);
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
    const afterCalls = await counts(engine, url);
    expect(afterCalls.every((key) => key.counted === key.held)).toBe(true);
    await sleep(5);
    await first.prepaidKeys.deleteExpired();
    for (const key of await counts(engine, url)) {
      const balance = await first.prepaidKeys.balance(key.id);
      expect(key.counted).toBe(key.held);
      expect(key.counted).toBe(balance.reserved);
      expect(balance.used + balance.reserved).toBeLessThanOrEqual(300);
    }
  });

  it("is freed by a balance or a reservation once a reservation's lease ends, and never before", async () => {
    const url = await databases.newDatabaseUrl(engine);
    const { prepaidKeys } = await open(url);
    const code = newPrepaidCode();
    const keyId = await prepaidKeys.issue(code, MODEL, 100, undefined);
    // A process reserves, then dies: nothing settles or renews its reservation.
    const dead = await prepaidKeys.reserve(code, MODEL, { inputTokens: 10, maxOutputTokens: 50 }, 200);
    expect(dead?.allowedOutput).toBe(50);
    expect(await prepaidKeys.balance(keyId)).toEqual({ total: 100, used: 0, reserved: 60, remaining: 40 });
    await sleep(250);
    expect(await prepaidKeys.balance(keyId)).toEqual({ total: 100, used: 0, reserved: 0, remaining: 100 });
    expect(await counts(engine, url)).toEqual([{ id: keyId, counted: 0, held: 0 }]);
    // Expired again, and this time a reservation that needs the room ends it: it gets the whole budget.
    await prepaidKeys.reserve(code, MODEL, { inputTokens: 10, maxOutputTokens: 50 }, 200);
    await sleep(250);
    const whole = await prepaidKeys.reserve(code, MODEL, { inputTokens: 10, maxOutputTokens: 500 }, 60_000);
    expect(whole?.allowedOutput).toBe(90);
    expect(await counts(engine, url)).toEqual([{ id: keyId, counted: 100, held: 100 }]);
    // The dead reservation's late settlement finds nothing to charge.
    expect(await prepaidKeys.settle(dead!, 60)).toBe(0);
    expect(await prepaidKeys.settle(whole!, 30)).toBe(70);
    expect(await prepaidKeys.balance(keyId)).toEqual({ total: 100, used: 30, reserved: 0, remaining: 70 });
  });
});
