import { close, fdatasync, open } from "node:fs";
import type Database from "better-sqlite3";

/** How often the log is written out; at 1,000 prepaid requests a second, about 1 MB of it each time. */
const FLUSH_INTERVAL_MS = 50;

export interface WalFlusher {
  /** Completed writes of the log to disk (for tests). */
  readonly flushes: number;
  readonly running: boolean;
}

interface RunningFlusher {
  state: { flushes: number; running: boolean };
  /**
   * The connections to the file this flusher serves, each with its count of rows written (`total_changes()`) and
   * that count at the last flush: a flush is due only when one of them wrote since. It stops when the last of
   * them is closed.
   */
  clients: Map<Database.Database, RowsWritten>;
}

interface RowsWritten {
  statement: Database.Statement;
  now: number;
  atLastFlush: number;
}

function serve(clients: RunningFlusher["clients"], client: Database.Database): void {
  clients.set(client, { statement: client.prepare("select total_changes()").pluck(), now: 0, atLastFlush: 0 });
}

// One flusher per log file and process, serving every connection of the process to that file.
const flushers = new Map<string, RunningFlusher>();

/**
 * In WAL mode a commit appends pages to the log without waiting for the disk (synchronous = NORMAL), and every
 * ~1,000 pages SQLite copies the log back into the database file inside the commit that crossed the mark: a
 * checkpoint, which first fsyncs the log. On the prepaid path that is every ~330 requests, and that fsync wrote
 * out the ~4 MB of log appended since the last one: 4-5 ms, in the tail of the latencies. This writes the log out
 * every 50 ms from libuv's thread pool, off the event loop, so that the checkpoint's fsync finds little left to do.
 * It changes nothing SQLite relies on: an fdatasync more is never wrong. A tick in which no connection wrote a row
 * only reads the counts: an idle server neither syncs the disk nor wakes a pool thread. It stops once its
 * connections are closed.
 */
export function flushWalInBackground(client: Database.Database): WalFlusher | undefined {
  if (client.memory) return undefined;
  const path = `${client.name}-wal`;
  const running = flushers.get(path);
  if (running) {
    serve(running.clients, client);
    return running.state;
  }
  const flusher: RunningFlusher = { state: { flushes: 0, running: true }, clients: new Map() };
  serve(flusher.clients, client);
  flushers.set(path, flusher);
  let descriptor: number | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    for (const each of flusher.clients.keys()) if (!each.open) flusher.clients.delete(each);
    if (flusher.clients.size === 0) {
      clearInterval(timer);
      flushers.delete(path);
      flusher.state.running = false;
      // Closing a descriptor drops the process's POSIX locks on that file; SQLite locks the database and -shm
      // files, never the log, so this leaves the locks of other connections alone.
      if (descriptor !== undefined) close(descriptor, () => undefined);
      return;
    }
    const counts = [...flusher.clients.values()];
    for (const count of counts) count.now = count.statement.get() as number;
    if (counts.every((count) => count.now === count.atLastFlush)) return;
    busy = true;
    if (descriptor === undefined) {
      // The log appears with the first write of a connection in WAL mode; until then there is nothing to flush.
      open(path, "r", (error, opened) => {
        busy = false;
        if (!error) descriptor = opened;
      });
      return;
    }
    // Counted before the flush starts: what is written meanwhile is flushed at a later tick.
    for (const count of counts) count.atLastFlush = count.now;
    fdatasync(descriptor, (error) => {
      busy = false;
      if (!error) flusher.state.flushes += 1;
    });
  }, FLUSH_INTERVAL_MS);
  timer.unref();
  return flusher.state;
}
