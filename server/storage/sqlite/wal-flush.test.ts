import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { waitFor } from "../../../cli/dev-stack/wait-for";
import { openSqlite, type SqliteDatabase } from "./open-sqlite";
import { flushWalInBackground } from "./wal-flush";

/** A table to write rows to, and its insert. */
function rowsTable(database: SqliteDatabase) {
  database.$client.exec("create table rows (value text)");
  return database.$client.prepare("insert into rows values (?)");
}

describe("the write-ahead log flushed in the background, on a real SQLite file", () => {
  let directory: string;
  let database: SqliteDatabase;
  beforeEach(() => {
    directory = mkdtempSync(join(tmpdir(), "paysvc-wal-flush-"));
    database = openSqlite(join(directory, "data.sqlite"));
  });
  afterEach(() => {
    if (database.$client.open) database.$client.close();
    rmSync(directory, { recursive: true, force: true });
  });

  it("writes the log out while the connection is open, and stops once it is closed", async () => {
    const flusher = flushWalInBackground(database.$client)!;
    const insert = rowsTable(database);
    await waitFor(
      async () => {
        insert.run("a row");
        return flusher.flushes >= 2;
      },
      { timeoutMs: 5_000, what: "two flushes" },
    );
    database.$client.close();
    await waitFor(async () => !flusher.running, { timeoutMs: 5_000, what: "the flusher to stop" });
    const flushes = flusher.flushes;
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(flusher.flushes).toBe(flushes);
  });

  it("flushes only after a write: an idle connection leaves the disk and the thread pool alone", async () => {
    const flusher = flushWalInBackground(database.$client)!;
    const insert = rowsTable(database);
    insert.run("a row");
    await waitFor(async () => flusher.flushes >= 1, { timeoutMs: 5_000, what: "a flush after the first write" });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const idle = flusher.flushes;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(flusher.flushes).toBe(idle);
    insert.run("another row");
    await waitFor(async () => flusher.flushes > idle, { timeoutMs: 5_000, what: "a flush after the next write" });
  });

  it("serves every connection to the file with one flusher, until the last of them is closed", async () => {
    const second = openSqlite(join(directory, "data.sqlite"));
    const flusher = flushWalInBackground(database.$client)!;
    expect(flushWalInBackground(second.$client)).toBe(flusher);
    database.$client.close();
    const flushes = flusher.flushes;
    const insert = rowsTable(second);
    await waitFor(
      async () => {
        insert.run("a row");
        return flusher.flushes >= flushes + 2;
      },
      { timeoutMs: 5_000, what: "flushes for the second connection's writes" },
    );
    expect(flusher.running).toBe(true);
    second.$client.close();
    await waitFor(async () => !flusher.running, { timeoutMs: 5_000, what: "the flusher to stop" });
    // A connection opened after that gets a flusher of its own.
    database = openSqlite(join(directory, "data.sqlite"));
    const next = flushWalInBackground(database.$client)!;
    expect(next).not.toBe(flusher);
    expect(next.running).toBe(true);
  });

  it("leaves the data as SQLite wrote it, through checkpoints and a reopen", async () => {
    const flusher = flushWalInBackground(database.$client)!;
    const client = database.$client;
    client.exec("create table rows (id integer primary key, value blob)");
    const insert = client.prepare("insert into rows (value) values (randomblob(3000))");
    // Over 1,000 pages: SQLite checkpoints inside these commits while the log is being flushed.
    for (let round = 0; round < 30; round++) {
      for (let row = 0; row < 50; row++) insert.run();
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(flusher.flushes).toBeGreaterThan(0);
    expect(client.pragma("integrity_check", { simple: true })).toBe("ok");
    client.close();
    database = openSqlite(join(directory, "data.sqlite"));
    expect(database.$client.prepare("select count(*) as count from rows").get()).toEqual({ count: 1_500 });
  });

  it("has nothing to do for an in-memory database", () => {
    const memory = openSqlite(":memory:");
    expect(flushWalInBackground(memory.$client)).toBeUndefined();
    memory.$client.close();
  });
});
