import { isAbsolute } from "node:path";
import type { Environment } from "./configuration-error";
import { databaseLocation, DatabaseUrlError, isTransientDatabase } from "./database-url";

/**
 * The variables that name files, as the user meant them: PAYSVC_CATALOG, a SQLite DATABASE_URL and DATA_DIR, when
 * set to a relative path, made absolute by `resolvePath` (the CLI's: against the directory the command was run
 * in). Returns only the variables it changed. Unset variables keep their defaults (`paysvc dev`'s
 * `file:./data/paysvc.sqlite` and `./data` stay the package folder's); PostgreSQL URLs, in-memory SQLite and a
 * DATABASE_URL that cannot be read are left as they are (the loaders report the last).
 */
export function resolvedPaths(env: Environment, resolvePath: (path: string) => string): Record<string, string> {
  const resolved: Record<string, string> = {};
  for (const name of ["PAYSVC_CATALOG", "DATA_DIR"] as const) {
    const path = env[name]?.trim();
    if (path && !isAbsolute(path)) resolved[name] = resolvePath(path);
  }
  const databaseUrl = env.DATABASE_URL?.trim();
  const location = databaseUrl ? sqliteLocation(databaseUrl) : undefined;
  if (location && !isTransientDatabase(location) && !isAbsolute(location.path)) {
    resolved.DATABASE_URL = `file:${resolvePath(location.path)}`;
  }
  return resolved;
}

function sqliteLocation(databaseUrl: string) {
  try {
    const location = databaseLocation(databaseUrl);
    return location.engine === "sqlite" ? location : undefined;
  } catch (error) {
    if (error instanceof DatabaseUrlError) return undefined;
    throw error;
  }
}

/**
 * Rewrites this process's environment with `resolvedPaths`, once, before any configuration is read: every loader,
 * and every process started with this environment (the app `paysvc start` and `paysvc dev` run from the package
 * folder), then reads the same absolute paths.
 */
export function resolvePathsInEnvironment(resolvePath: (path: string) => string): void {
  Object.assign(process.env, resolvedPaths(process.env, resolvePath));
}
