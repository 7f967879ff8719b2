import type Database from "better-sqlite3";

interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
  result?: { value: unknown } | { error: unknown };
}

/**
 * Runs the writes asked for in one turn of the event loop in one IMMEDIATE transaction, each in a savepoint of its
 * own. A short transaction's cost is mostly its commit (writing the pages it changed to the log, taking and giving
 * back the file's locks), so under load the prepaid calls that reach their reservation or their charge together
 * share one commit; a call alone pays what it did before. A write that throws rolls back its own savepoint only;
 * every caller's promise settles after the commit, never before, and all of them fail if the commit does.
 */
export class GroupCommit {
  private queue: QueuedWrite[] = [];
  private readonly inSavepoint: (write: () => unknown) => unknown;
  private readonly commitAll: (queue: QueuedWrite[]) => void;

  constructor(client: Database.Database) {
    // A transaction function called inside another runs as a savepoint of it (better-sqlite3).
    this.inSavepoint = client.transaction((write: () => unknown) => write());
    const all = client.transaction((queue: QueuedWrite[]) => {
      for (const item of queue) {
        try {
          item.result = { value: this.inSavepoint(item.write) };
        } catch (error) {
          item.result = { error };
        }
      }
    });
    this.commitAll = (queue) => all.immediate(queue);
  }

  /** Runs `write` (synchronous statements) in the next group's transaction; resolves once it is committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.queue.length === 0) setImmediate(this.flush);
      this.queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  private readonly flush = () => {
    const queue = this.queue;
    this.queue = [];
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
