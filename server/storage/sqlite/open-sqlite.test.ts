import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { drizzle } from "drizzle-orm/better-sqlite3";
import { migrate } from "drizzle-orm/better-sqlite3/migrator";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { hashPrepaidCode } from "../../prepaid/prepaid-code";
import { migrationsFolder } from "../migrations";
import { openSqlite } from "./open-sqlite";
import { SqlitePrepaidKeys } from "./sqlite-prepaid-keys";

const MIGRATIONS = migrationsFolder("sqlite");

/** A copy of the migrations folder that stops after the first `count` of them, as an older release shipped it. */
function migrationsUpTo(directory: string, count: number): string {
  const folder = join(directory, "migrations");
  cpSync(MIGRATIONS, folder, { recursive: true });
  const journalPath = join(folder, "meta", "_journal.json");
  const journal = JSON.parse(readFileSync(journalPath, "utf8")) as { entries: unknown[] };
  writeFileSync(journalPath, JSON.stringify({ ...journal, entries: journal.entries.slice(0, count) }));
  return folder;
}

describe("migrations over a database an older release wrote", () => {
  let directory: string;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-migrations-"));
  });
  afterEach(() => rmSync(directory, { recursive: true, force: true }));

  it("0003 keeps the live reservations of prepaid keys, and their keys go on reserving and charging", async () => {
    const path = join(directory, "paysvc.sqlite");
    const older = new Database(path);
    migrate(drizzle(older), { migrationsFolder: migrationsUpTo(directory, 3) });
    const code = "paysvc_pk_written-by-an-older-release";
    older
      .prepare(
        "insert into prepaid_keys (code_hash, model, total_tokens, used_tokens, status, created_at, updated_at) values (?, ?, 100, 10, 'active', 0, 0)",
      )
      .run(hashPrepaidCode(code), "vendor-a/gpt-6-luna");
    const expiresAt = Date.now() + 60_000;
    older
      .prepare("insert into prepaid_reservations (key_id, tokens, expires_at, created_at) values (1, 30, ?, 0)")
      .run(expiresAt);
    older.close();

    const database = openSqlite(path);
    try {
      const table = database.$client
        .prepare("select sql from sqlite_master where name = 'prepaid_reservations'")
        .pluck()
        .get() as string;
      expect(table).toMatch(/PRIMARY KEY\(`key_id`, `id`\)[\s\S]*\) WITHOUT ROWID$/);
      expect(database.$client.prepare("select * from prepaid_reservations").all()).toEqual([
        { key_id: 1, id: 1, tokens: 30, expires_at: expiresAt, created_at: 0 },
      ]);
      const store = new SqlitePrepaidKeys(database);
      expect(await store.balance(1)).toEqual({ total: 100, used: 10, reserved: 30, remaining: 60 });
      // The reservation made before the upgrade is charged by its call as before.
      await store.settle({ keyId: 1, id: 1, allowedOutput: 30 }, 25);
      const next = await store.reserve(code, "vendor-a/gpt-6-luna", { inputTokens: 5, maxOutputTokens: 100 }, 60_000);
      expect(next).toMatchObject({ keyId: 1, allowedOutput: 60 });
      expect(await store.balance(1)).toEqual({ total: 100, used: 35, reserved: 65, remaining: 0 });
    } finally {
      database.$client.close();
    }
  });
});
