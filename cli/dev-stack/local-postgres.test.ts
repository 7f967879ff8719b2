import { chmodSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { startLocalPostgres } from "./local-postgres";

async function query(url: string, text: string) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

describe("the embedded PostgreSQL server", () => {
  const directory = mkdtempSync(join(tmpdir(), "paysvc-local-postgres-"));
  afterAll(() => rmSync(directory, { recursive: true, force: true }));

  it("keeps its data between runs, creates databases idempotently, and refuses a wrong password", async () => {
    // Where `nobody` (as whom it runs when we are root) cannot reach, the data goes to the temporary directory.
    chmodSync(directory, 0o700);
    const dataDir = join(directory, "data");
    const first = await startLocalPostgres({ dataDir, port: 0 });
    try {
      await first.createDatabase("paysvc_test");
      await first.createDatabase("paysvc_test");
      await query(first.url("paysvc_test"), "create table kept (value text); insert into kept values ('still here')");
      const wrong = first.url("paysvc_test").replace(":paysvc@", ":wrong@");
      await expect(query(wrong, "select 1")).rejects.toThrow(/password authentication failed/);
    } finally {
      await first.stop();
    }
    const second = await startLocalPostgres({ dataDir, port: 0 });
    try {
      expect(second.dataDir).toBe(first.dataDir);
      expect(await query(second.url("paysvc_test"), "select value from kept")).toEqual([{ value: "still here" }]);
    } finally {
      await second.stop();
      if (second.dataDir !== dataDir) rmSync(second.dataDir, { recursive: true, force: true });
    }
    expect(await second.exited).not.toBeUndefined();
  });

  it("fails, with PostgreSQL's log, when another server holds its port, rather than answer for that server", async () => {
    chmodSync(directory, 0o755);
    const holder = await startLocalPostgres({ dataDir: join(directory, "holder"), port: 0 });
    try {
      // An empty directory given to it is initialised in place.
      const dataDir = mkdtempSync(join(directory, "given-"));
      await expect(startLocalPostgres({ dataDir, port: holder.port })).rejects.toThrow(/Address already in use/);
      expect(existsSync(join(dataDir, "PG_VERSION"))).toBe(true);
    } finally {
      await holder.stop();
    }
  });
});
