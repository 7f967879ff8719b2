/** The engines DATABASE_URL can name. */
export type Engine = "sqlite" | "postgresql";

export type DatabaseLocation = { engine: "sqlite"; path: string } | { engine: "postgresql"; url: string };

export class DatabaseUrlError extends Error {
  constructor(readonly problem: string) {
    super(`DATABASE_URL: ${problem}`);
    this.name = "DatabaseUrlError";
  }
}

/**
 * DATABASE_URL: `file:./data/paysvc.sqlite` (or a bare path, or `:memory:`) for SQLite, `postgres://` or
 * `postgresql://` for PostgreSQL. A URL of another scheme, or a PostgreSQL URL without a host or database, is
 * refused here, before anything connects; the messages never include the password.
 */
export function databaseLocation(databaseUrl: string): DatabaseLocation {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(databaseUrl)?.[1]?.toLowerCase();
  if (scheme === "postgres" || scheme === "postgresql") {
    let url: URL;
    try {
      url = new URL(databaseUrl);
    } catch {
      throw new DatabaseUrlError(
        `not a valid PostgreSQL URL (expected postgres://user:password@host:5432/database): ${redactedDatabaseUrl(databaseUrl)}`,
      );
    }
    if (!url.hostname || url.pathname.length <= 1) {
      throw new DatabaseUrlError(
        `names no ${url.hostname ? "database" : "host"} (expected postgres://user:password@host:5432/database): ${redactedDatabaseUrl(databaseUrl)}`,
      );
    }
    return { engine: "postgresql", url: databaseUrl };
  }
  if (scheme === undefined || scheme === "file" || /^[a-z]$/i.test(scheme)) {
    return { engine: "sqlite", path: databaseUrl.replace(/^file:(\/\/)?/, "") };
  }
  throw new DatabaseUrlError(`has the unsupported scheme "${scheme}:"; use file: (SQLite) or postgres:// (PostgreSQL)`);
}

/**
 * Whether a SQLite location keeps nothing once its process ends: `:memory:` (also written `file::memory:`), or an
 * empty path (SQLite's temporary database).
 */
export function isTransientDatabase(location: DatabaseLocation): boolean {
  if (location.engine !== "sqlite") return false;
  const path = location.path.trim();
  return path === "" || path.startsWith(":memory:") || /[?&]mode=memory(&|$)/.test(path);
}

/** The URL with its password replaced by ***, for messages and logs. */
export function redactedDatabaseUrl(databaseUrl: string): string {
  // Up to the last @: a password with an unescaped @ is still hidden whole (too much is hidden, never too little).
  return databaseUrl.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:).*@/i, "$1***@");
}
