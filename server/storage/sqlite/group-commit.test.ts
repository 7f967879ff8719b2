import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { GroupCommit } from "./group-commit";

describe("GroupCommit over a SQLite file", () => {
  const folders: string[] = [];
  const clients: Database.Database[] = [];
  afterEach(() => {
    for (const client of clients.splice(0)) client.close();
    for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  });
  /** Two connections to a new file in WAL mode: the writer's, and one that watches its commits. */
  function open() {
    const folder = mkdtempSync(join(tmpdir(), "paysvc-group-commit-"));
    folders.push(folder);
    const writer = new Database(join(folder, "test.sqlite"));
    writer.pragma("journal_mode = WAL");
    writer.exec("create table rows (id integer primary key, value text not null)");
    const watcher = new Database(join(folder, "test.sqlite"));
    clients.push(writer, watcher);
    // data_version moves each time another connection commits.
    const commits = () => watcher.pragma("data_version", { simple: true }) as number;
    const values = () => watcher.prepare("select value from rows order by id").pluck().all();
    return { writer, commits, values };
  }

  it("commits the writes asked for in one turn together, and rolls back only the one that threw", async () => {
    const { writer, commits, values } = open();
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    const before = commits();
    const results = await Promise.allSettled([
      group.run(() => insert.run("a").changes),
      group.run(() => {
        insert.run("half");
        throw new Error("refused after a write");
      }),
      group.run(() => insert.run("c").changes),
    ]);
    expect(results).toEqual([
      { status: "fulfilled", value: 1 },
      { status: "rejected", reason: new Error("refused after a write") },
      { status: "fulfilled", value: 1 },
    ]);
    expect(values()).toEqual(["a", "c"]);
    expect(commits() - before).toBe(1);
  });

  it("commits writes of later turns in transactions of their own, and settles each caller only once committed", async () => {
    const { writer, commits, values } = open();
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    const before = commits();
    await group.run(() => insert.run("one"));
    expect(values()).toEqual(["one"]);
    await group.run(() => insert.run("two"));
    expect(commits() - before).toBe(2);
  });

  it("rolls back whole a write alone in its turn that throws, and keeps going", async () => {
    const { writer, commits, values } = open();
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    const before = commits();
    const failed = group.run(() => {
      insert.run("half");
      throw new Error("refused after a write");
    });
    await expect(failed).rejects.toThrow("refused after a write");
    expect(values()).toEqual([]);
    expect(writer.inTransaction).toBe(false);
    await expect(group.run(() => insert.run("next").changes)).resolves.toBe(1);
    expect(values()).toEqual(["next"]);
    expect(commits() - before).toBe(1);
  });

  it("fails every write of a group whose commit fails", async () => {
    const { writer, values } = open();
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    // Another connection holds the write lock: the group's IMMEDIATE transaction cannot begin.
    const other = new Database(writer.name);
    clients.push(other);
    other.pragma("busy_timeout = 0");
    writer.pragma("busy_timeout = 0");
    other.prepare("begin immediate").run();
    const results = await Promise.allSettled([group.run(() => insert.run("x")), group.run(() => insert.run("y"))]);
    other.prepare("rollback").run();
    expect(results.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(values()).toEqual([]);
  });

  it("lets a write nobody waits on join a later turn's transaction, first, or commit alone once its wait is over", async () => {
    const { writer, commits, values } = open();
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    const before = commits();
    const soon = group.runSoon(() => insert.run("ended"), 1000);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(values()).toEqual([]);
    // A write of a later turn takes it along: one commit, the waiting write first.
    await group.run(() => insert.run("admitted"));
    await soon;
    expect(values()).toEqual(["ended", "admitted"]);
    expect(commits() - before).toBe(1);
    // Alone, it commits after its wait; settle() commits what waits at once (before a close).
    const started = Date.now();
    await group.runSoon(() => insert.run("alone"), 30);
    expect(Date.now() - started).toBeGreaterThanOrEqual(25);
    expect(commits() - before).toBe(2);
    const waiting = group.runSoon(() => insert.run("at close"), 60_000);
    group.settle();
    await waiting;
    expect(values()).toEqual(["ended", "admitted", "alone", "at close"]);
    expect(commits() - before).toBe(3);
  });

  it("runs a one-statement write without a savepoint: one that fails is undone alone, the others commit", async () => {
    const { writer, commits, values } = open();
    writer.exec("create unique index rows_value on rows (value)");
    const group = new GroupCommit(writer);
    const insert = writer.prepare("insert into rows (value) values (?)");
    const before = commits();
    const results = await Promise.allSettled([
      group.run(() => insert.run("a").changes, { single: true }),
      group.run(() => writer.prepare("insert into rows (value) values ('b'), ('a')").run(), { single: true }),
      group.run(() => insert.run("c").changes, { single: true }),
    ]);
    expect(results.map((result) => result.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    // The failed statement's first row ('b') is undone with it.
    expect(values()).toEqual(["a", "c"]);
    expect(commits() - before).toBe(1);
  });
});
