import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "../../cli/dev-stack/next-app";
import { isDatabaseUnavailable } from "../core/database-unavailable";
import { DeferredWrites } from "./deferred-writes";

const directory = mkdtempSync(join(tmpdir(), "paysvc-deferred-"));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The error node-postgres gives for a server that is not there: a port nobody listens on. */
async function refusedConnection(): Promise<unknown> {
  const pool = new pg.Pool({ connectionString: `postgres://u:p@127.0.0.1:${await freePort()}/db` });
  try {
    await pool.query("select 1");
    throw new Error("the query should have failed");
  } catch (error) {
    return error;
  } finally {
    await pool.end();
  }
}

/** A wrong statement on a real SQLite file: the database is there, the write is not one a retry would fix. */
function constraintError(): unknown {
  const database = new Database(join(directory, "constraint.sqlite"));
  database.exec("create table if not exists t (id integer primary key)");
  try {
    database.exec("insert into t (id) values (1); insert into t (id) values (1)");
    throw new Error("the insert should have failed");
  } catch (error) {
    return error;
  } finally {
    database.close();
  }
}

describe("isDatabaseUnavailable", () => {
  it("tells a database away for now from a wrong statement, through drizzle's wrapping", async () => {
    const refused = await refusedConnection();
    expect(isDatabaseUnavailable(refused)).toBe(true);
    expect(isDatabaseUnavailable(new Error("Failed query: select 1", { cause: refused }))).toBe(true);
    expect(
      isDatabaseUnavailable(Object.assign(new Error("the database system is starting up"), { code: "57P03" })),
    ).toBe(true);
    expect(isDatabaseUnavailable(new Error("Query read timeout"))).toBe(true);
    expect(isDatabaseUnavailable(constraintError())).toBe(false);
    expect(isDatabaseUnavailable(new Error("no prepaid key 7"))).toBe(false);
  });
});

describe("DeferredWrites", () => {
  it("answers a write that lands at once, and keeps nothing", async () => {
    const kept: Promise<unknown>[] = [];
    const writes = new DeferredWrites((work) => (kept.push(work), work), 10, 20);
    expect(await writes.write("test", {}, async () => 42)).toBe(42);
    expect(kept).toHaveLength(0);
    expect(writes.pending).toBe(0);
  });

  it("tries a write again while the database is away, until it lands, kept for the drain meanwhile", async () => {
    const refused = await refusedConnection();
    const kept: Promise<unknown>[] = [];
    const writes = new DeferredWrites((work) => (kept.push(work), work), 10, 20);
    let attempts = 0;
    const answered = await writes.write("test", { row: 1 }, async () => {
      attempts += 1;
      if (attempts < 4) throw refused;
      return "written";
    });
    expect(answered).toBeUndefined();
    expect(writes.pending).toBe(1);
    expect(kept).toHaveLength(1);
    await kept[0];
    expect(attempts).toBe(4);
    expect(writes.pending).toBe(0);
  });

  it("does not retry a wrong statement, and gives up on the writes still waiting when the process exits", async () => {
    const refused = await refusedConnection();
    const kept: Promise<unknown>[] = [];
    const writes = new DeferredWrites((work) => (kept.push(work), work), 10, 20);
    let wrong = 0;
    expect(await writes.write("wrong", {}, async () => ((wrong += 1), Promise.reject(constraintError())))).toBe(
      undefined,
    );
    expect(wrong).toBe(1);
    expect(kept).toHaveLength(0);

    let away = 0;
    await writes.write("away", { row: 2 }, async () => ((away += 1), Promise.reject(refused)));
    expect(writes.pending).toBe(1);
    writes.abandon();
    await kept[0];
    expect(writes.pending).toBe(0);
    const tries = away;
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(away).toBe(tries);
  });
});
