import type Database from "better-sqlite3";

interface QueuedWrite {
  write: () => unknown;
  /**
   * One statement and nothing after it that may throw: SQLite undoes a statement that fails by itself, so it needs
   * no savepoint of its own (two statements fewer).
   */
  single?: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result?: { value: unknown } | { error: unknown };
}

/**
 * Runs the writes asked for in one turn of the event loop in one IMMEDIATE transaction, each in a savepoint of its
 * own. A short transaction's cost is mostly its commit (writing the pages it changed to the log, taking and giving
 * back the file's locks), so under load the prepaid calls that reach their reservation or their charge together
 * share one commit; a call alone pays what it did before. A write that throws rolls back its own savepoint only;
 * every caller's promise settles after the commit, never before, and all of them fail if the commit does. A write
 * alone in its turn needs no savepoint (two statements fewer): if it throws, its transaction is rolled back whole.
 * A write nobody waits on (a rate limit's end, runSoon) may wait a little for company: it joins the next group's
 * transaction, or commits alone once its wait is over.
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  /** How the queue's commit is scheduled: on the next turn, after a write's wait for company, or not yet. */
  private scheduled: { kind: "turn" } | { kind: "wait"; timer: NodeJS.Timeout } | undefined;
  private readonly commitAll: (queue: QueuedWrite[]) => void;
  private readonly commitOne: (write: () => unknown) => unknown;

  constructor(client: Database.Database) {
    // One write: alone, a transaction of its own; called inside another transaction, a savepoint of it.
    const one = client.transaction((write: () => unknown) => write());
    this.commitOne = (write) => one.immediate(write);
    const all = client.transaction((queue: QueuedWrite[]) => {
      for (const item of queue) {
        try {
          item.result = { value: item.single ? item.write() : one(item.write) };
        } catch (error) {
          item.result = { error };
        }
      }
    });
    this.commitAll = (queue) => all.immediate(queue);
  }

  /**
   * Runs `write` (synchronous statements) in the next group's transaction; resolves once it is committed. `single`:
   * the write is one statement, which needs no savepoint (SQLite undoes a failed statement whole).
   */
  run<T>(write: () => T, { single = false } = {}): Promise<T> {
    return this.enqueue(write, single, () => {
      if (this.scheduled?.kind === "turn") return;
      if (this.scheduled) clearTimeout(this.scheduled.timer);
      this.scheduled = { kind: "turn" };
      setImmediate(this.flush);
    });
  }

  /**
   * Runs `write` in the next group's transaction, waiting up to `withinMs` for another write to share it: for the
   * writes nobody waits on, which then cost no commit of their own while calls follow one another.
   */
  runSoon<T>(write: () => T, withinMs: number, { single = false } = {}): Promise<T> {
    return this.enqueue(write, single, () => {
      if (!this.scheduled) this.scheduled = { kind: "wait", timer: setTimeout(this.flush, withinMs) };
    });
  }

  /** Commits what is queued now (before the connection closes). */
  settle(): void {
    if (this.queue.length > 0) this.flush();
  }

  private enqueue<T>(write: () => T, single: boolean, schedule: () => void): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ write, single, resolve: resolve as (value: unknown) => void, reject });
      schedule();
    });
  }

  private readonly flush = () => {
    if (this.scheduled?.kind === "wait") clearTimeout(this.scheduled.timer);
    this.scheduled = undefined;
    const queue = this.queue;
    if (queue.length === 0) return;
    this.queue = [];
    if (queue.length === 1) {
      const [item] = queue as [QueuedWrite];
      let value: unknown;
      try {
        value = this.commitOne(item.write);
      } catch (error) {
        return item.reject(error);
      }
      return item.resolve(value);
    }
    try {
      this.commitAll(queue);
    } catch (error) {
      for (const item of queue) item.reject(error);
      return;
    }
    for (const item of queue) {
      const { result } = item;
      if (result && "error" in result) item.reject(result.error);
      else item.resolve(result?.value);
    }
  };
}

/** Each connection's one group: every store's writes asked for in one turn share its transaction. */
const groups = new WeakMap<Database.Database, GroupCommit>();

/**
 * The group commit of a connection, shared by its stores: a prepaid call's reservation and its rate limit's
 * admission, asked for together, are one commit.
 */
export function groupCommitOf(client: Database.Database): GroupCommit {
  let group = groups.get(client);
  if (!group) groups.set(client, (group = new GroupCommit(client)));
  return group;
}
