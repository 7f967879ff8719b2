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
  /** The connections to the file this flusher serves; it stops when the last of them is closed. */
  clients: Set<Database.Database>;
}

// One flusher per log file and process: the framework's bundle and app/serve.mjs's direct routes each open a
// connection to the same file, in separate copies of this module, so the registry lives on globalThis.
const flushers = ((globalThis as Record<symbol, unknown>)[Symbol.for("paysvc.walFlushers")] ??= new Map<
  string,
  RunningFlusher
>()) as Map<string, RunningFlusher>;

/**
 * In WAL mode a commit appends pages to the log without waiting for the disk (synchronous = NORMAL), and every
 * ~1,000 pages SQLite copies the log back into the database file inside the commit that crossed the mark: a
 * checkpoint, which first fsyncs the log. On the prepaid path that is every ~170 requests, and that fsync wrote
 * out the ~4 MB of log appended since the last one: 4-5 ms, in the tail of the latencies. This writes the log out
 * every 50 ms from libuv's thread pool, off the event loop, so that the checkpoint's fsync finds little left to do.
 * It changes nothing SQLite relies on: an fdatasync more is never wrong. It stops once its connections are closed.
 */
export function flushWalInBackground(client: Database.Database): WalFlusher | undefined {
  if (client.memory) return undefined;
  const path = `${client.name}-wal`;
  const running = flushers.get(path);
  if (running) {
    running.clients.add(client);
    return running.state;
  }
  const flusher: RunningFlusher = { state: { flushes: 0, running: true }, clients: new Set([client]) };
  flushers.set(path, flusher);
  let descriptor: number | undefined;
  let busy = false;
  const timer = setInterval(() => {
    if (busy) return;
    for (const each of flusher.clients) if (!each.open) flusher.clients.delete(each);
    if (flusher.clients.size === 0) {
      clearInterval(timer);
      flushers.delete(path);
      flusher.state.running = false;
      // Closing a descriptor drops the process's POSIX locks on that file; SQLite locks the database and -shm
      // files, never the log, so this leaves the locks of other connections alone.
      if (descriptor !== undefined) close(descriptor, () => undefined);
      return;
    }
    busy = true;
    if (descriptor === undefined) {
      // The log appears with the first write of a connection in WAL mode; until then there is nothing to flush.
      open(path, "r", (error, opened) => {
        busy = false;
        if (!error) descriptor = opened;
      });
      return;
    }
    fdatasync(descriptor, (error) => {
      busy = false;
      if (!error) flusher.state.flushes += 1;
    });
  }, FLUSH_INTERVAL_MS);
  timer.unref();
  return flusher.state;
}
