import { resolve } from "node:path";
import { resolvePathsInEnvironment } from "../../config/caller-paths";

/**
 * The directory the user ran `paysvc` in. cli/bin.mjs moves the process into the package folder before loading
 * the CLI (the embedded stack finds its Next.js build, migrations and default data folder from the working
 * directory, some of it when its modules load), so it records the user's directory first and hands it over here.
 */
let callerDirectory = process.cwd();

export function setCallerDirectory(directory: string): void {
  callerDirectory = directory;
}

/** A path as the user meant it: a relative one is relative to the directory the command was run in. */
export function userPath(path: string): string {
  return resolve(callerDirectory, path);
}

/**
 * The paths the environment names (PAYSVC_CATALOG, a SQLite DATABASE_URL, DATA_DIR) made absolute the way
 * `userPath` makes arguments absolute, before any command reads its configuration: the loaders, the messages and
 * the app processes the commands start from the package folder all see the file the user meant.
 */
export function resolveEnvironmentPaths(): void {
  resolvePathsInEnvironment(userPath);
}
