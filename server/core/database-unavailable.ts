import { ApiError } from "./errors";

/** Connection errors of Node's sockets: the server is not there (stopped, restarting, unreachable). */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENOTFOUND",
  "EAI_AGAIN",
]);

/**
 * PostgreSQL's SQLSTATEs of a server that is away or busy for now: class 08 (connection exception), the server
 * shutting down or starting (57P01-57P03), too many connections (53300), a statement cancelled by a timeout
 * (57014), and the transient conflicts a retry clears (40001 serialization, 40P01 deadlock, 55P03 lock). SQLite's
 * codes of a file locked or unwritable for now.
 */
const DATABASE_CODES = new Set([
  "57P01",
  "57P02",
  "57P03",
  "53300",
  "57014",
  "40001",
  "40P01",
  "55P03",
  "SQLITE_BUSY",
  "SQLITE_LOCKED",
  "SQLITE_FULL",
  "SQLITE_IOERR",
  "SQLITE_CANTOPEN",
]);

/** node-postgres's own messages for a connection it lost, could not get, or gave up waiting on. */
const DRIVER_MESSAGES =
  /Connection terminated|Query read timeout|timeout exceeded when trying to connect|not queryable|Client was closed/;

/**
 * Whether `error` says the database is away or busy for now (stopped, restarting, paused past the timeout, out of
 * connections) rather than that the statement is wrong: such a request is answered 503, and a write that records
 * what already happened is tried again (deferred-writes.ts). Looks through drizzle's wrapping (`cause`).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let at = error, depth = 0; at && typeof at === "object" && depth < 5; depth++) {
    const { code, message } = at as { code?: unknown; message?: unknown };
    if (typeof code === "string") {
      if (SOCKET_CODES.has(code) || DATABASE_CODES.has(code) || code.startsWith("08")) return true;
      if (code.startsWith("SQLITE_IOERR")) return true;
    }
    if (typeof message === "string" && DRIVER_MESSAGES.test(message)) return true;
    at = (at as { cause?: unknown }).cause;
  }
  return false;
}

/** The answer to a request the database could not serve in time: 503, nothing charged, try again shortly. */
export function databaseUnavailable(): ApiError {
  return new ApiError(
    "database_unavailable",
    "The service's database is not answering for now; nothing was charged and no payment was taken. Try again in a few seconds.",
    { headers: { "Retry-After": "5" } },
  );
}
